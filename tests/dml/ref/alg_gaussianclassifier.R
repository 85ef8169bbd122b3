source("ref/_common.R")
source("ref/_refdata.R")
qda <- function(name, sm, verbose) {
  d <- read_data(name); X <- d$X; y <- d$y
  k <- max(y); m <- ncol(X)
  pri <- sapply(1:k, function(c) mean(y == c))
  mu <- t(sapply(1:k, function(c) colMeans(X[y == c, , drop = FALSE])))
  vmax <- max(sapply(1:k, function(c) apply(X[y == c, , drop = FALSE], 2, var)))
  S <- lapply(1:k, function(c) cov(X[y == c, , drop = FALSE]) + diag(sm * vmax, m))
  dets <- sapply(S, det)
  inv <- lapply(S, solve)
  for (c in 1:k) wref(paste0(name, "_inv", c), inv[[c]])
  wref(paste0(name, "_det"), dets)
  wmat(paste0(name, "_prior.csv"), pri)
  wmat(paste0(name, "_means.csv"), mu)
  wscalar(paste0(name, "_ok.scalar"), TRUE)
  wscalar(paste0(name, "_k.scalar"), k)
  L <- sapply(1:k, function(c) {
    Z <- sweep(X, 2, mu[c, ])
    log(pri[c]) - 0.5 * log((2 * pi)^m * dets[c]) - 0.5 * rowSums((Z %*% inv[[c]]) * Z)
  })
  sum(max.col(L, ties.method = "first") == y) / nrow(X) * 100
}
acc <- qda("iris", 1e-9, TRUE)
invisible(qda("wine", 1e-2, FALSE))
wlines("stdout.txt", paste0("Training Accuracy (%): ", jstr(acc)))
