source("ref/_common.R")
# SystemDS's interQuartileMean: sorted values expanded by their (integer)
# weights; position k (1-based) counts with the length of (k-1, k] inside
# (S/4, 3S/4], divided by S/2.
iqm <- function(x, w = rep(1, length(x))) {
  y <- sort(rep(x, w)); S <- length(y)
  k <- seq_len(S)
  part <- pmax(0, pmin(k, 0.75 * S) - pmax(k - 1, 0.25 * S))
  sum(y * part) / (0.5 * S)
}
# interQuantile: sorted expanded values at positions ceil(S p) .. ceil(S (1-p))
iq <- function(x, p, w = rep(1, length(x))) {
  y <- sort(rep(x, w)); S <- length(y)
  y[max(1, ceiling(S * p)):ceiling(S * (1 - p))]
}
X8 <- c(8, 1, 7, 2, 6, 3, 5, 4)
X5 <- c(9, -1, 4, 2, 7)
W5 <- c(1, 2, 0, 3, 1)
S <- rep(0, 20); S[3] <- 4; S[7] <- -2; S[11] <- 9; S[19] <- 1.5
Y <- 1:13; Y <- Y * Y - 7 * Y
wmat("M.csv", c(iqm(X8), iqm(X5), iqm(X5, W5), iqm(S), iqm(Y), iqm(X5, W5)))
wmat("Q1.csv", iq(X8, 0.25))
wmat("Q2.csv", iq(X5, 0.2, W5))
wmat("Q3.csv", iq(Y, 0.1))
wmat("Q4.csv", iq(S, 0.3))
