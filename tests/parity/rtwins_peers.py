#!/usr/bin/env python3
"""References for R twins whose R package Debian lacks, from a peer library.

  rtwins_peers.py PEER IN/ EXP/ [ARG ...]   (run by `rtwins.py gen`)

Some of SystemDS's builtin R twins load a CRAN package that Debian
(bookworm) does not package and CRAN cannot be reached here (naivebayes,
mltools, DescTools, imputeTS, sigmoid). Where a well-kept library that
Debian packages computes the same quantity as the R function the twin
calls, `rtwins.py gen` runs this driver instead of the R script: it reads
the case's inputs (IN/<name>.csv, an empty cell NaN, as rtwins.py writes
them), computes what the twin writes with that library, and writes it as
EXP/<output> in Matrix Market array format, which `gen` turns into the
committed reference as it does R's files. Needs Debian's python3 with
python3-sklearn, python3-scipy, python3-pandas (or the interpreter named
by BRAID_REF_PYTHON). Each function below says which R function it stands
for and why the peer computes the same.
"""

import os
import sys

import numpy as np


def read(indir, name):
    """IN/<name>.csv as a float matrix (empty cells NaN)."""
    rows = []
    with open(os.path.join(indir, name + ".csv")) as f:
        for line in f:
            if line.strip():
                rows.append([float(t) if t.strip() else np.nan
                             for t in line.rstrip("\n").split(",")])
    return np.array(rows, dtype=float)


def write(expdir, name, m):
    """m (a matrix or a scalar) as EXP/<name>, Matrix Market array."""
    m = np.atleast_2d(np.asarray(m, dtype=float))
    with open(os.path.join(expdir, name), "w") as f:
        f.write("%%MatrixMarket matrix array real general\n")
        f.write("%d %d\n" % m.shape)
        for v in m.T.reshape(-1):  # column-major, as the format says
            f.write("%.17g\n" % v)


def naive_bayes_predict(indir, expdir, laplace):
    """NaiveBayesPredict.R: naivebayes::multinomial_naive_bayes(laplace)
    on the first 80% of the rows, then YRaw = test %*% t(log(params)) +
    log(prior) and Y = max.col(YRaw, ties.method="last"). The package's
    params are (per-class feature sums + laplace) / (their row sum +
    laplace * #features) and its prior the class shares; scikit-learn's
    MultinomialNB(alpha=laplace, fit_prior=True) has the same
    feature_log_prob_ and class_log_prior_, and predict_joint_log_proba is
    YRaw. Columns are the classes present in training, sorted (R's factor
    levels)."""
    from sklearn.naive_bayes import MultinomialNB
    D, C = read(indir, "D"), read(indir, "C")[:, 0]
    train = int(D.shape[0] * 0.8)
    nb = MultinomialNB(alpha=float(laplace), force_alpha=True, fit_prior=True)
    nb.fit(D[:train], C[:train])
    yraw = nb.predict_joint_log_proba(D[train:])
    k = yraw.shape[1]
    y = k - np.argmax(yraw[:, ::-1], axis=1)  # the last maximum, 1-based
    write(expdir, "YRaw", yraw)
    write(expdir, "Y", y.reshape(-1, 1))


def mcc(indir, expdir):
    """mcc.R: mltools::mcc(preds, actuals) of 0/1 vectors, (TP TN - FP FN)
    / sqrt((TP + FP)(TP + FN)(TN + FP)(TN + FN)), 0 when that product is
    0 (mltools divides by 1 then, and the numerator is 0);
    sklearn.metrics.matthews_corrcoef computes the same and returns 0 for a
    zero denominator."""
    from sklearn.metrics import matthews_corrcoef
    p, a = read(indir, "predictions")[:, 0], read(indir, "labels")[:, 0]
    write(expdir, "mattCorrCoeff", matthews_corrcoef(a, p))


def impute(indir, expdir, strategy):
    """meanImputation.R / medianImputation.R: Salaries' yrs.since.phd and
    yrs.service read with na.strings "19"; the first column's NAs get
    DescTools::Mode of the rest, the second's mean (or median) with
    na.rm=TRUE. scikit-learn's SimpleImputer computes the same per column
    (most_frequent, mean, median; NaN ignored). DescTools::Mode returns
    every value of a tie (R then recycles them over the NAs) where
    SimpleImputer takes the smallest, so a tie is refused here: the
    case's data has one mode."""
    from sklearn.impute import SimpleImputer
    X = read(indir, "X")
    X[X == 19] = np.nan
    first = X[~np.isnan(X[:, 0]), 0]
    vals, counts = np.unique(first, return_counts=True)
    if np.sum(counts == counts.max()) != 1:
        raise SystemExit("impute: the first column's mode is tied")
    a = SimpleImputer(strategy="most_frequent").fit_transform(X[:, :1])
    b = SimpleImputer(strategy=strategy).fit_transform(X[:, 1:2])
    write(expdir, "B", np.hstack([a, b]))


def winsorize(indir, expdir):
    """winsorize.R: DescTools::Winsorize of each column with its defaults:
    values below the 5% quantile set to it, above the 95% quantile set to
    it, quantile() of type 7 (DescTools 0.99.x before 0.99.54 passes
    probs = c(0.05, 0.95), type = 7; later versions take val = quantile(x,
    c(0.05, 0.95)), R's default type 7 too). NumPy's quantile with method
    "linear" is Hyndman and Fan's type 7 (R's default); numpy.clip clamps.
    (scipy.stats.mstats.winsorize is not the same: it replaces a count of
    values, not at interpolated quantiles.)"""
    A = read(indir, "A")
    lo, hi = np.quantile(A, [0.05, 0.95], axis=0, method="linear")
    write(expdir, "B", np.clip(A, lo, hi))


def na_locf(indir, expdir, option):
    """na_locfTest.R: the input's zeros made NA, then imputeTS::na_locf(A,
    option) with its default na_remaining = "rev", column by column (the
    package imputes each column of a matrix alone): "locf" carries the last
    observation forward, and the NAs before a column's first observation
    take the next one (the reverse direction); "nocb" the other way round.
    pandas' DataFrame.ffill / bfill fill each column the same way: locf is
    ffill then bfill, nocb bfill then ffill."""
    import pandas as pd
    A = read(indir, "A")
    A[A == 0] = np.nan
    df = pd.DataFrame(A)
    df = df.ffill().bfill() if option == "locf" else df.bfill().ffill()
    write(expdir, "O", df.to_numpy())


def sigmoid(indir, expdir):
    """sigmoid.R: sigmoid::sigmoid(X) with its default method "logistic",
    1 / (1 + exp(-x)) per cell; scipy.special.expit is that function."""
    from scipy.special import expit
    write(expdir, "B", expit(read(indir, "A")))


PEERS = {
    "naive_bayes_predict": naive_bayes_predict,
    "mcc": mcc,
    "impute": impute,
    "winsorize": winsorize,
    "na_locf": na_locf,
    "sigmoid": sigmoid,
}


def main(argv):
    if len(argv) < 4 or argv[1] not in PEERS:
        sys.stderr.write(__doc__)
        return 2
    PEERS[argv[1]](argv[2], argv[3], *argv[4:])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
