source("ref/_common.R")
X <- matrix(c(1, 0, 2, 0, 0, 3, 4, 0, 5, 6, 0, 0), nrow = 4, ncol = 3, byrow = TRUE)
wmat("r.csv", cbind(X, X, X) * 7)
