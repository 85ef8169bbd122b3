"""scikit-learn-style estimators over braid's builtin library.

    from braid.sklearn import L2SVM, LogisticRegression, LinearRegression, KMeans, PCA
    clf = L2SVM(reg=1e-3).fit(X, y)
    clf.predict(X_test), clf.score(X_test, y_test)
    clf.get_params(), clf.set_params(reg=0.1)

Each estimator calls the DML builtins through the lazy API (fit: l2svm,
multiLogReg, lm, kmeans, pca; predict/transform: l2svmPredict,
multiLogRegPredict, lmPredict, kmeansPredict, pcaTransform), so a fit is
one braid run over the caller's arrays (bound without copies; L2SVM
uses msvm for more than two classes). Inputs are checked as scikit-learn
checks them (2-D, finite, not empty, the fitted number of features). The
hyper-parameters are the keyword arguments of __init__, stored unchanged
(get_params/set_params as scikit-learn's BaseEstimator does; clone works);
fitted attributes end with an underscore. scikit-learn is not needed.
"""
import inspect
import os
from typing import Any, Dict, Optional

import numpy as np

from . import library as _b
from .lazy import compute

__all__ = ["L2SVM", "LogisticRegression", "LinearRegression", "KMeans", "PCA", "NotFittedError"]


try:   # scikit-learn's own class where it is installed (its checks expect it)
    from sklearn.exceptions import NotFittedError as _NotFitted
except ImportError:
    class _NotFitted(ValueError, AttributeError):
        pass


class NotFittedError(_NotFitted):
    """predict/transform before fit (a ValueError and an AttributeError,
    and scikit-learn's NotFittedError where it is installed)."""


def _conversion_warning() -> type:
    try:
        from sklearn.exceptions import DataConversionWarning
    except ImportError:
        DataConversionWarning = UserWarning
    return DataConversionWarning


def _f(name: str):
    return _b.get(name)


def _compute_counting(builtin_file: str, *values: Any):
    """compute(*values) with the loop statistics of the run (braid_loops):
    (result, iterations), iterations the most any one entry ran of the
    first loop statement of the builtin's file (scripts/builtin/<file>:
    its main loop; a nested loop starts below the loop enclosing it), or
    None when that file ran no loop. The builtins return no iteration
    counts (as in SystemDS); this count does not depend on what they
    print."""
    loops: list = []
    res = compute(*values, loops=loops)
    mine = [l for l in loops if os.path.basename(l["file"]) == builtin_file]
    first = min(mine, key=lambda l: (l["line"], l["col"]), default=None)
    return res, (first["max_iterations"] if first else None)


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
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet; call fit() first")


def _matrix(X: Any, est: Any = None, fitting: bool = False) -> Any:
    """X checked and as braid takes it: scipy.sparse as float64 CSR, else a
    2-D float64 array (float64 C-ordered arrays pass through without a
    copy). Refuses what scikit-learn refuses (complex, 1-D, empty, NaN or
    infinite cells); fitting records n_features_in_, later calls check it."""
    if type(X).__module__.startswith("scipy.sparse"):
        X = X.tocsr()
        if X.dtype != np.float64:
            X = X.astype(np.float64)
        cells = X.data
    else:
        if type(X).__name__ == "DataFrame":
            X = X.to_numpy()
        X = np.asarray(X)
        if X.dtype.kind == "c":
            raise ValueError("Complex data not supported")
        if X.ndim != 2:
            raise ValueError(f"Expected 2D array, got {X.ndim}D array instead; reshape your data "
                             "(Reshape your data with array.reshape(-1, 1) for one feature)")
        X = np.asarray(X, dtype=np.float64)
        cells = X
    if X.shape[0] < 1 or X.shape[1] < 1:
        raise ValueError(f"Found array with {X.shape[0]} sample(s) and {X.shape[1]} feature(s) (shape={X.shape}) "
                         "while a minimum of 1 is required.")
    if not np.isfinite(cells).all():
        raise ValueError("Input contains NaN, infinity or a value too large for dtype('float64').")
    if est is not None and fitting:
        est.n_features_in_ = X.shape[1]
    elif est is not None and hasattr(est, "n_features_in_") and X.shape[1] != est.n_features_in_:
        raise ValueError(f"X has {X.shape[1]} features, but {type(est).__name__} is expecting "
                         f"{est.n_features_in_} features as input.")
    return X


def _column(y: Any, n: Optional[int] = None, numeric: bool = False) -> np.ndarray:
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        import warnings
        warnings.warn("A column-vector y was passed when a 1d array was expected", _conversion_warning(), stacklevel=3)
        y = y[:, 0]
    if y.ndim != 1:
        raise ValueError("y must be 1-D (or one column)")
    if n is not None and len(y) != n:
        raise ValueError(f"X and y have inconsistent numbers of samples: {n} and {len(y)}")
    if numeric:
        y = y.astype(np.float64)
        if not np.isfinite(y).all():
            raise ValueError("Input y contains NaN, infinity or a value too large for dtype('float64').")
    return y


class _Classifier(_Estimator):
    _estimator_type = "classifier"

    def score(self, X: Any, y: Any) -> float:
        """Mean accuracy of predict(X) against y."""
        return float(np.mean(self.predict(X) == _column(y)))

    def _encode(self, X: Any, y: Any) -> np.ndarray:
        y = _column(y, X.shape[0])
        if y.dtype.kind == "f" and not np.array_equal(y, np.round(y)):
            raise ValueError("Unknown label type: 'continuous' (a classifier needs class labels)")
        self.classes_, codes = np.unique(y, return_inverse=True)
        k = len(self.classes_)
        if k < 2:
            raise ValueError(f"{type(self).__name__} needs samples of at least 2 classes; y has {k} class")
        return codes


class L2SVM(_Classifier):
    """Linear SVM with squared hinge loss: DML's l2svm for two classes,
    msvm (one against the rest) for more."""

    def __init__(self, reg: float = 1.0, intercept: bool = False, epsilon: float = 0.001,
                 max_iter: int = 100, max_inner_iter: int = 20) -> None:
        self.reg = reg
        self.intercept = intercept
        self.epsilon = epsilon
        self.max_iter = max_iter
        self.max_inner_iter = max_inner_iter

    def fit(self, X: Any, y: Any) -> "L2SVM":
        X = _matrix(X, self, fitting=True)
        codes = self._encode(X, y)
        k = len(self.classes_)
        common = dict(intercept=bool(self.intercept), epsilon=float(self.epsilon), reg=float(self.reg),
                      maxIterations=int(self.max_iter), verbose=False)
        if k == 2:
            W = _f("l2svm")(X, np.where(codes == 1, 1.0, -1.0), maxii=int(self.max_inner_iter), **common)
        else:
            W = _f("msvm")(X, codes.astype(np.float64) + 1.0, **common)
        # l2svm's outer loop (msvm calls l2svm once per class): n_iter_ is
        # the most any class ran, as scikit-learn's LinearSVC's
        W, iters = _compute_counting("l2svm.dml", W)
        self.coef_ = np.array(W)
        self.n_iter_ = iters or 0
        return self

    def decision_function(self, X: Any) -> np.ndarray:
        """Scores: binary, a signed distance per sample (> 0: classes_[1],
        l2svmPredict's YRaw); else one column per class (msvmPredict)."""
        self._check_fitted("coef_")
        X = _matrix(X, self)
        if len(self.classes_) == 2:
            raw, _ = _f("l2svmPredict")(X, self.coef_, verbose=False)
            return np.asarray(compute(raw))[:, 0]
        raw, _ = _f("msvmPredict")(X, self.coef_)
        return np.asarray(compute(raw))

    def predict(self, X: Any) -> np.ndarray:
        d = self.decision_function(X)
        return self.classes_[(d > 0).astype(int) if d.ndim == 1 else d.argmax(axis=1)]


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
        X = _matrix(X, self, fitting=True)
        Y = self._encode(X, y).astype(np.float64) + 1.0      # DML's labels are 1..k
        B = _f("multiLogReg")(X, Y, icpt=int(self.icpt), tol=float(self.tol), reg=float(self.reg),
                              maxi=int(self.max_iter), maxii=int(self.max_inner_iter), verbose=False)
        self.coef_ = np.array(compute(B))
        return self

    def _predict(self, X: Any):
        self._check_fitted("coef_")
        M, P, _ = _f("multiLogRegPredict")(_matrix(X, self), self.coef_, verbose=False)
        return compute(M, P)

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities, columns in the order of classes_."""
        return np.asarray(self._predict(X)[0])

    def predict(self, X: Any) -> np.ndarray:
        P = np.asarray(self._predict(X)[1])
        return self.classes_[P[:, 0].astype(int) - 1]


class LinearRegression(_Estimator):
    _estimator_type = "regressor"
    """Ridge-regularized least squares (DML's lm: a direct solve up to 1024
    features, else conjugate gradients). icpt as in lm (0, 1, 2)."""

    def __init__(self, icpt: int = 1, reg: float = 1e-7, tol: float = 1e-7, max_iter: int = 0) -> None:
        self.icpt = icpt
        self.reg = reg
        self.tol = tol
        self.max_iter = max_iter

    def fit(self, X: Any, y: Any) -> "LinearRegression":
        X = _matrix(X, self, fitting=True)
        B = _f("lm")(X, _column(y, X.shape[0], numeric=True), icpt=int(self.icpt), reg=float(self.reg),
                     tol=float(self.tol), maxi=int(self.max_iter), verbose=False)
        # lm solves the normal equations directly up to 1024 features
        # (lmDS: one step, no loop), else by conjugate gradients (lmCG's
        # loop, one iteration per step)
        B, steps = _compute_counting("lmCG.dml", B)
        self.B_ = np.array(B)
        self.n_iter_ = 1 if steps is None else steps
        beta = self.B_[:, 0]
        self.coef_, self.intercept_ = (beta[:-1], beta[-1]) if self.icpt else (beta, 0.0)
        return self

    def predict(self, X: Any) -> np.ndarray:
        self._check_fitted("B_")
        return np.asarray(compute(_f("lmPredict")(_matrix(X, self), self.B_, icpt=int(self.icpt), verbose=False)))[:, 0]

    def score(self, X: Any, y: Any) -> float:
        """The coefficient of determination R^2 of predict(X)."""
        y = _column(y).astype(np.float64)
        res = y - self.predict(X)
        return float(1.0 - res @ res / ((y - y.mean()) @ (y - y.mean())))


class KMeans(_Estimator):
    _estimator_type = "clusterer"
    """k-means clustering (DML's kmeans; labels are 0-based here)."""

    def __init__(self, n_clusters: int = 8, runs: int = 10, max_iter: int = 1000, eps: float = 1e-6,
                 random_state: Optional[int] = None) -> None:
        self.n_clusters = n_clusters
        self.runs = runs
        self.max_iter = max_iter
        self.eps = eps
        self.random_state = random_state   # kmeans' seed; None: a random one

    def fit(self, X: Any, y: Any = None) -> "KMeans":
        X = _matrix(X, self, fitting=True)
        if X.shape[0] < self.n_clusters:
            raise ValueError(f"n_samples={X.shape[0]} should be >= n_clusters={self.n_clusters}.")
        C, Y = _f("kmeans")(X, k=int(self.n_clusters), runs=int(self.runs), max_iter=int(self.max_iter),
                            eps=float(self.eps), is_verbose=False,
                            seed=-1 if self.random_state is None else int(self.random_state))
        C, Y = compute(C, Y)
        self.cluster_centers_ = np.array(C)
        self.labels_ = np.asarray(Y)[:, 0].astype(int) - 1
        self.inertia_ = -self.score(X)
        return self

    def predict(self, X: Any) -> np.ndarray:
        self._check_fitted("cluster_centers_")
        Y = compute(_f("kmeansPredict")(_matrix(X, self), self.cluster_centers_))
        return np.asarray(Y)[:, 0].astype(int) - 1

    def fit_predict(self, X: Any, y: Any = None) -> np.ndarray:
        return self.fit(X).labels_

    def score(self, X: Any, y: Any = None) -> float:
        """Minus the sum of squared distances to the nearest centre."""
        self._check_fitted("cluster_centers_")
        X = _matrix(X, self)
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
        X = _matrix(X, self, fitting=True)
        if X.shape[0] < 2:
            raise ValueError(f"PCA needs n_samples >= 2, got n_samples = {X.shape[0]}")
        R, C, M, S = _f("pca")(X, K=int(self.n_components), center=bool(self.center),
                               scale=bool(self.scale))
        R, C, M, S = compute(R, C, M, S)
        self.components_ = np.array(C).T          # scikit-learn's layout: components x features
        self.centering_, self.scale_factor_ = np.array(M), np.array(S)
        return R

    def transform(self, X: Any) -> np.ndarray:
        self._check_fitted("components_")
        Y = _f("pcaTransform")(_matrix(X, self), np.ascontiguousarray(self.components_.T), self.centering_,
                               self.scale_factor_)
        return np.asarray(compute(Y))

    def fit_transform(self, X: Any, y: Any = None) -> np.ndarray:
        return np.asarray(self._fit(X))
