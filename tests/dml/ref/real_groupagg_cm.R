source("ref/_common.R")
A <- c(1, 2, 3, 4, 5, 6, 10, -2); G <- c(1, 1, 2, 2, 2, 3, 1, 3); W <- c(1, 2, 1, 1, 3, 1, 2, 0.5)
cm <- function(x, w, k) { m <- sum(w * x) / sum(w); sum(w * (x - m)^k) / sum(w) }
C <- t(sapply(1:3, function(g) { s <- G == g
  c(cm(A[s], rep(1, sum(s)), 2), cm(A[s], rep(1, sum(s)), 3), cm(A[s], rep(1, sum(s)), 4), cm(A[s], W[s], 3)) }))
wmat("C.csv", C)
