source("ref/_common.R")
layer_init <- function(din, dout, scale)
  list(W = matrix(1:(din * dout), din, dout, byrow = TRUE) / (din * dout) * scale,
       b = rep(scale, dout), name = paste0("layer", din, "x", dout))
fwd <- function(X, l) sweep(X %*% l$W, 2, l$b, "+")
X <- matrix(1:12, 4, 3, byrow = TRUE) / 10 - 0.5
l1 <- layer_init(3, 4, 1); l2 <- layer_init(4, 2, -0.5)
Y <- fwd(pmax(fwd(X, l1), 0), l2)
l1s <- l1; l1s$W <- l1$W * 2
Y2 <- fwd(pmax(fwd(X, l1s), 0), l2)
wlines("stdout.txt", paste0("second layer: ", l2$name))
wmat("Y.csv", Y); wscalar("e.scalar", sum(Y^2))
wmat("Y2.csv", Y2); wscalar("e2.scalar", sum(Y2^2))
wmat("W1.csv", l1$W); wmat("W1s.csv", l1s$W)
wscalar("total.scalar", sum(X) + 2 * sum(l1$W) + 3 * sum(Y))
