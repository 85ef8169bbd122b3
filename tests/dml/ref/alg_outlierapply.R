source("ref/_common.R")
source("ref/_refdata.R")
# outlierBySdApply / outlierByIQRApply vs R: statistics of a training
# matrix (sd with divisor n - 1; quartiles by type-1 quantiles) applied to
# held-out rows with planted outliers and a NaN cell.
set.seed(3)
Xtr <- matrix(round(rnorm(40 * 3, mean = c(0, 5, -2), sd = c(1, 2, 0.5)), 3), ncol = 3, byrow = TRUE)
Xte <- matrix(round(rnorm(10 * 3, mean = c(0, 5, -2), sd = c(1, 2, 0.5)), 3), ncol = 3, byrow = TRUE)
Xte[2, 1] <- 4.5; Xte[5, 2] <- -3; Xte[5, 3] <- 1; Xte[9, 2] <- 13
wref("Xte", Xte)  # the case sets cell [8, 3] to NaN
Xte[8, 3] <- NaN
mu <- colMeans(Xtr); sdv <- apply(Xtr, 2, sd)
wref("mu", t(mu)); wref("sd", t(sdv))
q1 <- apply(Xtr, 2, quantile, probs = 0.25, type = 1); q3 <- apply(Xtr, 2, quantile, probs = 0.75, type = 1)
wref("q1", t(q1)); wref("q3", t(q3)); wref("iqr", t(q3 - q1))
rep <- function(X, O, method) {
  O[is.na(O)] <- FALSE
  if (method == 0) X[rowSums(O) == 0, , drop = FALSE]
  else if (method == 1) { X[O] <- 0; X } else { X[O] <- NaN; X }
}
Osd <- function(k) abs(sweep(Xte, 2, mu)) > k * matrix(sdv, nrow(Xte), 3, byrow = TRUE)
Oiqr <- function(k) sweep(Xte, 2, q1 - k * (q3 - q1)) < 0 | sweep(Xte, 2, q3 + k * (q3 - q1)) > 0
for (m in 0:2) wmat(sprintf("sd_%d.csv", m), rep(Xte, Osd(2), m))
wmat("sd_default.csv", rep(Xte, Osd(3), 1))
for (m in 0:2) wmat(sprintf("iqr_%d.csv", m), rep(Xte, Oiqr(1), m))
wmat("iqr_default.csv", rep(Xte, Oiqr(1.5), 1))
wmat("iqr_k0.csv", rep(Xte, Oiqr(0), 2))
