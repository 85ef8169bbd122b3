source("ref/_common.R")
# f: sum(W) + k with W = k x ... (1 x k of k): k^2 + k; lmPredict: X %*% B
wmat("R.csv", matrix(c(3 * 3 + 3, 2 * 2 + 2, -1, 3 + 7, 4 * 2 * 2, 9 * 1), ncol = 1))
