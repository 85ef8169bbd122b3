source("ref/_common.R")
# ridge by QR of the augmented system (ridge_qr / lm_ref in _common.R)
n <- 30; i <- 1:n
X <- cbind(sin(0.5 * i), 2 * cos(0.9 * i), (i / 30)^2)
y <- 1.5 + as.vector(X %*% c(0.5, -0.2, -0.9)) + 0.1 * sin(2.1 * i)
wmat("B.csv", lm_ref(X, y, 0, 1e-7))
wmat("Breg.csv", lm_ref(X, y, 0, 0.5))
wmat("Bols.csv", unname(coef(lm(y ~ X - 1))))
