source("ref/_common.R")
source("ref/_refdata.R")
set.seed(5)
n <- 20; k <- 3
X <- cbind(matrix(round(runif(n * 3), 6), n), sample(1:3, n, replace = TRUE))
wref("X", X)
w <- median(apply(X[, 1:3], 2, sd))
N <- t(sapply(1:n, function(i) {
  d <- sapply(1:n, function(j) sum((X[j, 1:3] - X[i, 1:3])^2) + w^2 * (X[j, 4] != X[i, 4]))
  d[i] <- Inf
  order(d, seq_len(n))[1:k]
}))
wref("N", N)
C <- sapply(1:n, function(i) { tb <- table(X[N[i, ], 4]); as.numeric(names(tb)[which.max(tb)]) })
wref("C", C)
wscalar("ok.scalar", TRUE)
wscalar("rows_fallback.scalar", n)
wlines("stdout.txt", "the number of samples should be an integral multiple of 100. Setting s = 100")
