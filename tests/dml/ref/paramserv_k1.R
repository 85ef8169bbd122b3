# paramserv with one worker is plain SGD: the identities are exact (TRUE),
# W is the SGD result computed here in R.
source("ref/_common.R")
n <- 53
i <- 1:n
X <- cbind(sin(i * 0.7), cos(i * 1.3), sin(i * 0.11 + 1))
y <- X %*% c(1.5, -2, 0.75) + 0.3 + 0.05 * sin(i * 5.1)
W <- matrix(0, 3, 1); b <- 0
for (ep in 1:4) for (j in 1:ceiling(n / 10)) {
  r <- ((j - 1) * 10 + 1):min(j * 10, n)
  err <- X[r, , drop = FALSE] %*% W + b - y[r]
  gW <- t(X[r, , drop = FALSE]) %*% err / length(r)
  gb <- sum(err) / length(r)
  W <- W - 0.3 * gW; b <- b - 0.3 * gb
}
for (f in c("bsp_equals_loop", "asp_equals_loop", "epoch_equals_loop", "fullbatch_equals_loop"))
  wscalar(paste0(f, ".scalar"), TRUE)
wscalar("length.scalar", 2L)
wscalar("init_untouched.scalar", 0)
wmat("W.csv", W)
