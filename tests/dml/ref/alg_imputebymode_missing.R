source("ref/_common.R")
X <- matrix(c(4, 2, NaN, 4, 2, 0, 1, 1, NaN, NaN, 2, NaN, NaN, NaN, 0), nrow = 5, byrow = TRUE)
# SystemDS's mode: the cells >= 1 (not the missing ones), n of them, codes
# 1..n counted, ties to the largest code, 0 without such cells
mode <- function(c) {
  v <- c[!is.na(c) & c >= 1]
  if (length(v) == 0) return(0)
  n <- length(v)
  cnt <- tabulate(as.integer(v[v <= n]), nbins = n)
  n + 1 - which.max(rev(cnt))
}
v <- apply(X, 2, mode)
Y <- X
for (j in seq_len(ncol(X))) Y[is.na(Y[, j]), j] <- v[j]
wmat("Y.csv", Y)
wmat("v.csv", matrix(v, nrow = 1))
mask <- c(1, 0, 1)
vm <- sapply(seq_len(ncol(X)), function(j) {
  if (mask[j] == 0) mean(X[!is.na(X[, j]), j]) else mode(X[, j] * mask[j])
})
wmat("vm.csv", matrix(vm, nrow = 1))
