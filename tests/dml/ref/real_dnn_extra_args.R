source("ref/_common.R")
N <- 2; C <- 2; H <- 5; F <- 3; K <- 3
x <- matrix(seq(1, N*C*H*H), N, C*H*H, byrow = TRUE)
x <- x - mean(x)
w <- matrix(seq(1, F*C*K*K), F, C*K*K, byrow = TRUE) / 10
# direct convolution, padding 1, stride 1, NCHW rows; bias added once
P <- H
conv <- matrix(0, N, F*P*P)
for (n in 1:N) for (f in 1:F) for (i in 1:P) for (j in 1:P) {
  s <- 0
  for (c in 1:C) for (a in 1:K) for (bb in 1:K) {
    r <- i + a - 2; q <- j + bb - 2
    if (r >= 1 && r <= H && q >= 1 && q <= H)
      s <- s + x[n, (c-1)*H*H + (r-1)*H + q] * w[f, (c-1)*K*K + (a-1)*K + bb]
  }
  conv[n, (f-1)*P*P + (i-1)*P + j] <- s + f
}
wmat("conv.csv", conv)
# 2x2 max pooling, stride 2, no padding: 2x2 outputs per channel
Q <- 2
pool <- matrix(0, N, C*Q*Q)
for (n in 1:N) for (c in 1:C) for (i in 1:Q) for (j in 1:Q) {
  v <- c()
  for (a in 0:1) for (bb in 0:1) v <- c(v, x[n, (c-1)*H*H + (2*(i-1)+a)*H + 2*(j-1)+bb+1])
  pool[n, (c-1)*Q*Q + (i-1)*Q + j] <- max(v)
}
wmat("pool.csv", pool)
