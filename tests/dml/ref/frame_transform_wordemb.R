source("ref/_common.R")
E <- matrix(c(1, 2, 3, 4, 5, 6), nrow = 2, byrow = TRUE)
codes <- c(2, 1, NA, 2)   # cat, dog, yak (not in the metadata), cat
X <- t(sapply(codes, function(k) if (is.na(k)) rep(0, 3) else E[k, ]))
wmat("X.csv", X)
wscalar("s.scalar", sum(X %*% t(E)))
