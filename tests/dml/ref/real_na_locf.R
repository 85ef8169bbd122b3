source("ref/_common.R")
A <- matrix(c(1, 0, 2, 1, 3, 1, -1, 0, 0, 1, 5, 0), 6, byrow = TRUE)
y <- numeric(6); prev <- 0
for (i in 1:6) { prev <- A[i, 1] + A[i, 2] * prev; y[i] <- prev }
wmat("Y.csv", matrix(y, ncol = 1))
# SystemDS's na_locf: a forward fill from 0 (cumsumprod with missing
# cells as 0), then the missing cells whose fill is 0 take the next value
# carried back the same way (an all-missing column ends as 0)
fill <- function(v) {
  m <- is.na(v); x <- ifelse(m, 0, v)
  f <- numeric(length(v)); prev <- 0
  for (i in seq_along(v)) { prev <- x[i] + m[i] * prev; f[i] <- prev }
  L <- (f == 0) & m
  b <- numeric(length(v)); nxt <- 0
  for (i in rev(seq_along(v))) { nxt <- x[i] + L[i] * nxt; b[i] <- nxt }
  b * L + f
}
X <- cbind(c(1, NA, NA, 4, 5, 6), rep(NA, 6), c(NA, 8, 0, NA, 11, NA))
wmat("F.csv", apply(X, 2, fill))
wmat("B.csv", apply(X[6:1, ], 2, fill)[6:1, ])
