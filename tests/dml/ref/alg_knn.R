source("ref/_common.R")
source("ref/_refdata.R")
set.seed(11)
X <- matrix(round(runif(80 * 3), 6), 80); X[, 2] <- X[, 2] * 10
T <- matrix(round(runif(15 * 3), 6), 15); T[, 2] <- T[, 2] * 10
cl <- 1 + (X[, 1] + 0.1 * X[, 2] + 0.5 * runif(80) > 1) + (X[, 3] > 0.7)
v <- round(X[, 1] * 3 + X[, 3] + runif(80), 6)
wref("X", X); wref("T", T); wref("cl", cl); wref("v", v)
nn <- function(A, B, k) t(apply(B, 1, function(b) {
  d <- sqrt(colSums((t(A) - b)^2)); order(d, seq_along(d))[1:k] }))
vote <- function(N, y) apply(N, 1, function(r) { tb <- table(y[r]); as.numeric(names(tb)[which.max(tb)]) })
imp <- function(X, y, k, cat) sapply(1:ncol(X), function(j) {
  Xj <- X[, -j, drop = FALSE]
  N <- t(sapply(1:nrow(Xj), function(i) {
    d <- sqrt(colSums((t(Xj) - Xj[i, ])^2)); d[i] <- Inf; order(d, seq_along(d))[1:k] }))
  Y <- matrix(y[N], nrow(N))
  E <- if (cat) (Y != y) else (Y - y)^2
  sum(rowSums(E) / k)
})
N5 <- nn(X, T, 5)
wmat("nnr.csv", N5)
wmat("vote.csv", vote(N5, cl))
# SystemDS: the position (1..k) of the last neighbour with the largest label
wmat("sysds_pos.csv", apply(N5, 1, function(r) { l <- cl[r]; max(which(l == max(l))) }))
wmat("imp_cat.csv", matrix(imp(X, cl, 5, TRUE), 1))
wmat("vote4.csv", vote(nn(X, T, 4), cl))
N4 <- nn(X, T, 4)
wmat("mean.csv", rowMeans(matrix(v[N4], nrow(N4))))
wmat("imp_cont.csv", matrix(imp(X, v, 4, FALSE), 1))
wmat("median.csv", apply(matrix(v[N4], nrow(N4)), 1, median))
# each matrix scaled by its own column range, as SystemDS's prepareKNNData
sc <- function(A) {
  lo <- apply(A, 2, min); hi <- apply(A, 2, max)
  sweep(sweep(A, 2, lo), 2, (hi - lo) / 2, FUN = "/") - 1
}
wmat("nnr_scaled.csv", nn(sc(X), sc(T), 3))
wscalar("noimp.scalar", 0)
