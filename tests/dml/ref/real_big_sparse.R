source("ref/_common.R")
# X: the anti-diagonal permutation of order n = 1e6 (X[i, n + 1 - i] = 1):
# t(X) %*% X and X %*% X are the identity
n <- 1e6
wscalar("s1.scalar", n)
wscalar("s2.scalar", 2 * n)
wscalar("s3.scalar", 10)
wscalar("s4.scalar", n)
wscalar("s5.scalar", 2)
