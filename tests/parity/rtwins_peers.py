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
for and why the peer computes the same. Where no Debian library computes
the function (outliers' outlier, imputeTS' statsNA), the function here
computes it from the R package's documented semantics, quoted in its
docstring: our own code, written from the manual, never from the
package's source.
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


def outlier_of(A, opposite):
    """outliers::outlier(x, opposite, logical=FALSE) per column of a
    matrix. Its manual (CRAN package outliers): "Finds value with largest
    difference between it and sample mean, which can be an outlier";
    opposite: "if set to TRUE, gives opposite value (if largest value has
    maximum difference from the mean, it gives smallest and vice versa)";
    logical: "if set to TRUE, gives vector of logical values, and possible
    outlier position is marked to TRUE" (the twins use the default FALSE:
    the values); a matrix gives one value per column. So per column: the
    maximum when max - mean >= mean - min, else the minimum, and the other
    one with opposite. (An exact tie, which random doubles do not give,
    picks the maximum: the manual does not say.)"""
    out = []
    for x in A.T:
        mu = x.mean()
        far_max = (x.max() - mu) >= (mu - x.min())
        out.append(x.max() if far_max != bool(opposite) else x.min())
    return np.array([out])


def outlier(indir, opposite, expdir):
    """outlier.R (arguments IN, opposite, EXP):
    t(as.matrix(outlier(X, opposite))): the row of each column's outlier
    (outlier_of)."""
    write(expdir, "B", outlier_of(read(indir, "A"), opposite == "TRUE"))


def multiple_builtins(indir, expdir):
    """multipleBuiltins.R: outlier(Winsorize(X), opposite=FALSE) with
    DescTools' Winsorize defaults (the 5% and 95% quantiles of type 7, as
    winsorize() above) over the whole matrix (Winsorize takes a vector; the
    twin's X is one column), then outlier_of."""
    A = read(indir, "A")
    lo, hi = np.quantile(A, [0.05, 0.95], method="linear")
    write(expdir, "B", outlier_of(np.clip(A, lo, hi), False))


def stats_na(indir, bins, expdir):
    """statsNATest.R (arguments IN, bins, EXP): the input's zeros made NA, then imputeTS::statsNA(x,
    bins, print_only=FALSE), whose manual (CRAN package imputeTS) lists
    what it returns: the series' length, the number of NAs, their
    percentage ("round(..., 3)" percent, as a string with "%", which the
    twin parses and divides by 100), the number of NA gaps (runs of
    consecutive NAs), their average size, the longest gap, the most
    frequent gap size and the gap size that accounts for the most NAs
    (size times count). The twin writes those 8 numbers. For a tie in the
    last two the package takes R's which.max over the table of gap sizes,
    sorted by size: the smallest size (the manual does not say; the
    Java test's inputs have none). bins only shapes the printed "NAs in
    bins" part, which the twin does not write."""
    x = read(indir, "A")[:, 0]
    na = (x == 0) | np.isnan(x)
    gaps, run = [], 0
    for v in list(na) + [False]:
        if v:
            run += 1
        elif run:
            gaps.append(run)
            run = 0
    n, k = len(x), int(na.sum())
    sizes = sorted(set(gaps))
    count = {g: gaps.count(g) for g in sizes}
    freq = max(sizes, key=lambda g: (count[g], -g)) if gaps else 0
    weighty = max(sizes, key=lambda g: (count[g] * g, -g)) if gaps else 0
    write(expdir, "Out", [[n], [k], [round(k / n * 100, 3) / 100],
                          [len(gaps)], [np.mean(gaps) if gaps else 0],
                          [max(gaps) if gaps else 0], [freq], [weighty]])


PEERS = {
    "outlier": outlier,
    "multiple_builtins": multiple_builtins,
    "stats_na": stats_na,
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
