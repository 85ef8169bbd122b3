source("ref/_common.R")
L <- matrix(c(1, 0.5, 0.2, 1, 0.3, 0.9, -1, -1), 4, byrow = TRUE)
R <- matrix(c(1, 2, 0, 0.5, 3, 0, 0.1, 1, 0, 0.2, 1, 0), 2, byrow = TRUE)
R[1, 1] <- 0.5; R[2, 1] <- 1
Ex <- matrix(0, 4, 6); Ex[1, 2] <- 1; Ex[3, 5] <- 1
u <- c(1, 3, 2, 4)
topk <- function(K) {
  K <- min(K, sum(colSums(R != 0) > 0))
  Y <- (L %*% R) * (Ex == 0)
  ix <- t(sapply(u, function(i) order(-Y[i, ], seq_len(ncol(Y)))[1:K]))
  v <- t(sapply(seq_along(u), function(k) Y[u[k], ix[k, ]]))
  list(ix = ix * (v > 0), v = v)
}
t3 <- topk(3); t5 <- topk(5)
wmat("ix3.csv", t3$ix); wmat("val3.csv", t3$v)
wmat("ix5.csv", t5$ix); wmat("val5.csv", t5$v)
R <- R; R[, 4] <- R[, 2]
u <- c(2, 3)
wmat("ix_tie.csv", topk(4)$ix)
