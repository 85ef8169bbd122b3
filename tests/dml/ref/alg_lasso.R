source("ref/_common.R")
source("ref/_refdata.R")
# Lasso min 0.5 |y - Z w|^2 + tau |w|_1 by cyclic coordinate descent to
# full convergence (Z = DML's scale(X), y centered).
d <- read_data("diabetes")
X <- d$X; y <- d$y - mean(d$y)
Z <- scale(X)
attributes(Z) <- list(dim = dim(X))
cd <- function(Z, y, tau) {
  m <- ncol(Z); w <- rep(0, m); r <- y; nz <- colSums(Z^2)
  for (sweep in 1:200000) {
    maxd <- 0
    for (j in 1:m) {
      rho <- sum(Z[, j] * r) + nz[j] * w[j]
      wj <- sign(rho) * max(abs(rho) - tau, 0) / nz[j]
      if (wj != w[j]) { r <- r - Z[, j] * (wj - w[j]); maxd <- max(maxd, abs(wj - w[j])); w[j] <- wj }
    }
    if (maxd <= 1e-14 * max(abs(w), 1e-300)) break
  }
  w
}
for (tau in 1:3) {
  w <- cd(Z, y, 10^tau)
  wref(paste0("w", tau), w)
  wscalar(paste0("ok", tau, ".scalar"), TRUE)
}
wscalar("ls_ok.scalar", TRUE)
wscalar("huge_tau_nnz.scalar", 0)
wscalar("shape.scalar", "10x1")
