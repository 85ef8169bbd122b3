source("ref/_common.R")
n <- 30; i <- 1:n
X <- cbind(2 + sin(0.7 * i), i / 10, cos(1.1 * i))
y <- 1.5 + as.vector(X %*% c(0.5, -0.2, -0.9)) + 0.1 * sin(2.1 * i)
wmat("B.csv", lm_ref(X, y, 1, 1e-7))
wmat("Breg.csv", lm_ref(X, y, 1, 0.1))
wmat("Bc.csv", lm_ref(cbind(X, 2), y, 1, 1e-7)[-4])
wscalar("Bc_w.scalar", TRUE)
