source("ref/_common.R")
R <- matrix(7 + 78, 6, 5); R[, 2:3] <- 78
wmat("R.csv", R)
wmat("S.csv", diag(78, 4))
wmat("T.csv", matrix((1:12)^2, ncol = 1))
wmat("A.csv", matrix(1 + 1 + 3 + 6 + 10, 3, 2))
