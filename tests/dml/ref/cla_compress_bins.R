source("ref/_common.R")
X <- matrix(c(1, 10, 2, 20, 3, 30, 4, 40, 5, 50), nrow = 5, byrow = TRUE)
code <- function(v, n) {
  k <- ceiling((v - min(v)) / (max(v) - min(v)) * n)
  pmin(pmax(k, 1), n)
}
wmat("R.csv", cbind(code(X[, 1], 2), code(X[, 2], 4)))
wscalar("mrows.scalar", 4)          # the most bins of a column
wscalar("m21.scalar", "3.0\u00b75.0")   # column 1's second bin [3, 5]
wscalar("m42.scalar", "40.0\u00b750.0") # column 2's fourth bin [40, 50]
wscalar("framediff.scalar", 0)
