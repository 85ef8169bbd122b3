source("ref/_common.R")
source("ref/_refdata.R")
# outlier: the column extreme farthest from the mean (min on a tie);
# outlierBySd / outlierByIQR: repeated detection and repair as documented
# in scripts/builtin/outlierBySd.dml and outlierByIQR.dml.
X <- read_data("wine")$X
mu <- colMeans(X); mx <- apply(X, 2, max); mn <- apply(X, 2, min)
up <- (mx - mu) > (mu - mn)
wmat("out.csv", matrix(ifelse(up, mx, mn), nrow = 1))
wmat("out_opp.csv", matrix(ifelse(up, mn, mx), nrow = 1))

repair <- function(X, detect, method, maxit) {
  it <- 0
  repeat {
    O <- detect(X) & !is.nan(X)
    if (method == 1) O <- O & X != 0
    if (!any(O)) break
    it <- it + 1
    if (method == 0) X <- X[rowSums(O) == 0, , drop = FALSE]
    else X[O] <- if (method == 1) 0 else NaN
    if (maxit > 0 && it >= maxit) break
  }
  X
}
colstat <- function(X, f) sapply(seq_len(ncol(X)), function(j) f(X[!is.nan(X[, j]), j]))
bysd <- function(k) function(X) {
  m <- colstat(X, mean); s <- colstat(X, sd)
  abs(sweep(X, 2, m)) > matrix(k * s, nrow(X), ncol(X), byrow = TRUE)
}
Y1 <- repair(X, bysd(2), 1, 0)
wmat("sd_zero.csv", Y1)
wmat("sd_zero_stats.csv", rbind(colstat(Y1, mean), colstat(Y1, sd)))
wmat("sd_delete.csv", repair(X, bysd(2.5), 0, 0))
wmat("sd_nan1.csv", repair(X, bysd(3), 2, 1))
wmat("sd_nan.csv", repair(X, bysd(2), 2, 0))
q1 <- function(c) quantile(c, 0.25, type = 1, names = FALSE)
q3 <- function(c) quantile(c, 0.75, type = 1, names = FALSE)
byiqr <- function(k) function(X) {
  a <- colstat(X, q1); b <- colstat(X, q3)
  lo <- matrix(a - k * (b - a), nrow(X), ncol(X), byrow = TRUE)
  hi <- matrix(b + k * (b - a), nrow(X), ncol(X), byrow = TRUE)
  X < lo | X > hi
}
Q <- repair(X, byiqr(1.5), 1, 0)
wmat("iqr_zero.csv", Q)
a <- colstat(Q, q1); b <- colstat(Q, q3)
wmat("iqr_stats.csv", rbind(a, b, b - a))
wmat("iqr_delete.csv", repair(X, byiqr(1.5), 0, 0))
wmat("iqr_nan2.csv", repair(X, byiqr(1), 2, 2))
