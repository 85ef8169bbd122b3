source("ref/_common.R")
n <- 1000; i <- 1:n
R <- cbind((i / n)^2, as.numeric(i %% 3 == 0), 15 * i)
X <- (matrix(1:1600, 200, 8, byrow = TRUE) * 7) %% 13
S <- cbind(colMeans(X), apply(X, 2, sd), apply(X, 2, max) - apply(X, 2, min))
B <- X[1:100, 1:4] + rep(1:10, each = 10)
wmat("R.csv", R)
wmat("cs.csv", matrix(colSums(R), nrow = 1))
wmat("S.csv", S)
wmat("B.csv", B)
