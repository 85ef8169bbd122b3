source("ref/_common.R")
n <- 30; i <- 1:n
X <- cbind(5 + 2 * sin(0.7 * i), i / 10, 2, 3 * cos(1.1 * i))
y <- 1.5 + as.vector(X %*% c(0.5, -0.2, -0.9, -1.6)) + 0.1 * sin(2.1 * i)
wmat("B.csv", lm_ref(X, y, 2, 1e-7)[-3])
wscalar("B_w.scalar", TRUE)
wmat("Breg.csv", lm_ref(X, y, 2, 1))
wmat("B1reg.csv", lm_ref(X, y, 1, 1))
