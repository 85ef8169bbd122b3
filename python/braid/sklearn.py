"""scikit-learn-style estimators over braid's builtin library.

    from braid.sklearn import L2SVM, LogisticRegression, LinearRegression, KMeans, PCA
    clf = L2SVM(reg=1e-3).fit(X, y)
    clf.predict(X_test), clf.score(X_test, y_test)
    clf.get_params(), clf.set_params(reg=0.1)

Each estimator calls the DML builtins through the lazy API (fit: l2svm,
multiLogReg, lm, kmeans, pca; predict/transform: l2svmPredict,
multiLogRegPredict, lmPredict, kmeansPredict, pcaTransform), so a fit is
one braid run over the caller's arrays (bound without copies). The
hyper-parameters are the keyword arguments of __init__, stored unchanged
(get_params/set_params as scikit-learn's BaseEstimator does; clone works);
fitted attributes end with an underscore. scikit-learn is not needed.
"""
import inspect
from typing import Any, Dict

import numpy as np

from . import library as _b
from .lazy import compute

__all__ = ["L2SVM", "LogisticRegression", "LinearRegression", "KMeans", "PCA"]


def _f(name: str):
    return _b.get(name)


class _Estimator:
    """get_params/set_params over __init__'s keyword arguments."""

    @classmethod
    def _param_names(cls):
        return [p for p in inspect.signature(cls.__init__).parameters if p != "self"]

    def get_params(self, deep: bool = True) -> Dict[str, Any]:
        """The hyper-parameters as given to __init__ (or set_params)."""
        return {p: getattr(self, p) for p in self._param_names()}

    def set_params(self, **params: Any) -> "_Estimator":
        """Sets hyper-parameters by name; returns self."""
        names = self._param_names()
        for k, v in params.items():
            if k not in names:
                raise ValueError(f"invalid parameter {k!r} for {type(self).__name__} (parameters: {', '.join(names)})")
            setattr(self, k, v)
        return self

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self.get_params().items())})"

    def _check_fitted(self, attr: str) -> None:
        if not hasattr(self, attr):
            raise RuntimeError(f"this {type(self).__name__} is not fitted yet; call fit() first")


def _matrix(X: Any) -> Any:
    """X as braid takes it: scipy.sparse as it is, else a 2-D float array
    (float64 C-ordered arrays pass through without a copy)."""
    if type(X).__module__.startswith("scipy.sparse"):
        return X
    if type(X).__name__ == "DataFrame":
        X = X.to_numpy(dtype=np.float64)
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"expected a 2-D array of samples x features, got {X.ndim} dimensions")
    return X


def _column(y: Any) -> np.ndarray:
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.ndim != 1:
        raise ValueError("y must be 1-D (or one column)")
    return y


class _Classifier(_Estimator):
    def score(self, X: Any, y: Any) -> float:
        """Mean accuracy of predict(X) against y."""
        return float(np.mean(self.predict(X) == _column(y)))

    def _encode(self, y: Any) -> np.ndarray:
        y = _column(y)
        self.classes_, codes = np.unique(y, return_inverse=True)
        return codes


class L2SVM(_Classifier):
    """Binary linear SVM with squared hinge loss (DML's l2svm)."""

    def __init__(self, reg: float = 1.0, intercept: bool = False, epsilon: float = 0.001,
                 max_iter: int = 100, max_inner_iter: int = 20) -> None:
        self.reg = reg
        self.intercept = intercept
        self.epsilon = epsilon
        self.max_iter = max_iter
        self.max_inner_iter = max_inner_iter

    def fit(self, X: Any, y: Any) -> "L2SVM":
        codes = self._encode(y)
        if len(self.classes_) != 2:
            raise ValueError(f"L2SVM is a binary classifier; y has {len(self.classes_)} classes")
        Y = np.where(codes == 1, 1.0, -1.0)
        W = _f("l2svm")(_matrix(X), Y, intercept=bool(self.intercept), epsilon=float(self.epsilon),
                        reg=float(self.reg), maxIterations=int(self.max_iter), maxii=int(self.max_inner_iter),
                        verbose=False)
        self.coef_ = np.array(compute(W))
        return self

    def decision_function(self, X: Any) -> np.ndarray:
        """Signed distances (l2svmPredict's YRaw); > 0: classes_[1]."""
        self._check_fitted("coef_")
        raw, _ = _f("l2svmPredict")(_matrix(X), self.coef_, verbose=False)
        return np.asarray(compute(raw))[:, 0]

    def predict(self, X: Any) -> np.ndarray:
        return self.classes_[(self.decision_function(X) > 0).astype(int)]


class LogisticRegression(_Classifier):
    """Multinomial logistic regression (DML's multiLogReg). icpt: 0 no
    intercept, 1 intercept, 2 intercept with standardized features."""

    def __init__(self, reg: float = 1.0, icpt: int = 2, tol: float = 1e-6, max_iter: int = 100,
                 max_inner_iter: int = 20) -> None:
        self.reg = reg
        self.icpt = icpt
        self.tol = tol
        self.max_iter = max_iter
        self.max_inner_iter = max_inner_iter

    def fit(self, X: Any, y: Any) -> "LogisticRegression":
        Y = self._encode(y).astype(np.float64) + 1.0      # DML's labels are 1..k
        B = _f("multiLogReg")(_matrix(X), Y, icpt=int(self.icpt), tol=float(self.tol), reg=float(self.reg),
                              maxi=int(self.max_iter), maxii=int(self.max_inner_iter), verbose=False)
        self.coef_ = np.array(compute(B))
        return self

    def _predict(self, X: Any):
        self._check_fitted("coef_")
        M, P, _ = _f("multiLogRegPredict")(_matrix(X), self.coef_, verbose=False)
        return compute(M, P)

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities, columns in the order of classes_."""
        return np.asarray(self._predict(X)[0])

    def predict(self, X: Any) -> np.ndarray:
        return self.classes_[np.asarray(self._predict(X)[1])[:, 0].astype(int) - 1]


class LinearRegression(_Estimator):
    """Ridge-regularized least squares (DML's lm: a direct solve up to 1024
    features, else conjugate gradients). icpt as in lm (0, 1, 2)."""

    def __init__(self, icpt: int = 1, reg: float = 1e-7, tol: float = 1e-7, max_iter: int = 0) -> None:
        self.icpt = icpt
        self.reg = reg
        self.tol = tol
        self.max_iter = max_iter

    def fit(self, X: Any, y: Any) -> "LinearRegression":
        B = _f("lm")(_matrix(X), _column(y).astype(np.float64), icpt=int(self.icpt), reg=float(self.reg),
                     tol=float(self.tol), maxi=int(self.max_iter), verbose=False)
        self.B_ = np.array(compute(B))
        beta = self.B_[:, 0]
        self.coef_, self.intercept_ = (beta[:-1], beta[-1]) if self.icpt else (beta, 0.0)
        return self

    def predict(self, X: Any) -> np.ndarray:
        self._check_fitted("B_")
        return np.asarray(compute(_f("lmPredict")(_matrix(X), self.B_, icpt=int(self.icpt), verbose=False)))[:, 0]

    def score(self, X: Any, y: Any) -> float:
        """The coefficient of determination R^2 of predict(X)."""
        y = _column(y).astype(np.float64)
        res = y - self.predict(X)
        return float(1.0 - res @ res / ((y - y.mean()) @ (y - y.mean())))


class KMeans(_Estimator):
    """k-means clustering (DML's kmeans; labels are 0-based here)."""

    def __init__(self, n_clusters: int = 8, runs: int = 10, max_iter: int = 1000, eps: float = 1e-6,
                 seed: int = -1) -> None:
        self.n_clusters = n_clusters
        self.runs = runs
        self.max_iter = max_iter
        self.eps = eps
        self.seed = seed

    def fit(self, X: Any, y: Any = None) -> "KMeans":
        X = _matrix(X)
        C, Y = _f("kmeans")(X, k=int(self.n_clusters), runs=int(self.runs), max_iter=int(self.max_iter),
                            eps=float(self.eps), is_verbose=False, seed=int(self.seed))
        C, Y = compute(C, Y)
        self.cluster_centers_ = np.array(C)
        self.labels_ = np.asarray(Y)[:, 0].astype(int) - 1
        self.inertia_ = -self.score(X)
        return self

    def predict(self, X: Any) -> np.ndarray:
        self._check_fitted("cluster_centers_")
        Y = compute(_f("kmeansPredict")(_matrix(X), self.cluster_centers_))
        return np.asarray(Y)[:, 0].astype(int) - 1

    def fit_predict(self, X: Any, y: Any = None) -> np.ndarray:
        return self.fit(X).labels_

    def score(self, X: Any, y: Any = None) -> float:
        """Minus the sum of squared distances to the nearest centre."""
        self._check_fitted("cluster_centers_")
        X = _matrix(X)
        X = X.toarray() if hasattr(X, "toarray") else X
        d = ((X[:, None, :] - self.cluster_centers_[None, :, :]) ** 2).sum(axis=2)
        return -float(d.min(axis=1).sum())


class PCA(_Estimator):
    """Principal component analysis (DML's pca; center and scale the
    columns first, as DML's defaults do)."""

    def __init__(self, n_components: int = 2, center: bool = True, scale: bool = True) -> None:
        self.n_components = n_components
        self.center = center
        self.scale = scale

    def fit(self, X: Any, y: Any = None) -> "PCA":
        self._fit(X)
        return self

    def _fit(self, X: Any):
        R, C, M, S = _f("pca")(_matrix(X), K=int(self.n_components), center=bool(self.center),
                               scale=bool(self.scale))
        R, C, M, S = compute(R, C, M, S)
        self.components_ = np.array(C).T          # scikit-learn's layout: components x features
        self.centering_, self.scale_factor_ = np.array(M), np.array(S)
        return R

    def transform(self, X: Any) -> np.ndarray:
        self._check_fitted("components_")
        Y = _f("pcaTransform")(_matrix(X), np.ascontiguousarray(self.components_.T), self.centering_,
                               self.scale_factor_)
        return np.asarray(compute(Y))

    def fit_transform(self, X: Any, y: Any = None) -> np.ndarray:
        return np.asarray(self._fit(X))
