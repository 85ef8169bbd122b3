source("ref/_common.R")
source("ref/_refdata.R")
# cox vs R's coxph(ties = "breslow") run to convergence (eps 1e-12):
# coefficients table, confidence limits (alpha 0.05 and 0.1), log-likelihood,
# AIC, Cox-Snell R^2 and its maximum, likelihood-ratio / Wald / score
# tests, covariance; timestamps sorted (stable) with dense ranks; a
# baseline column removed through R.
suppressMessages(library(survival))
set.seed(3)
n <- 60
x1 <- round(rnorm(n), 3); x2 <- rbinom(n, 1, 0.5); x3 <- round(runif(n), 3)
t <- round(rexp(n, exp(0.5 * x1 - 0.7 * x2)) * 10, 1); e <- rbinom(n, 1, 0.8)
t[c(4, 9)] <- t[c(5, 10)]
X <- cbind(t, e, x1, x2, x3)
wref("X", X)
ctl <- coxph.control(eps = 1e-12, toler.chol = 1e-14, iter.max = 100)
fit <- function(form, alpha) {
  f <- coxph(form, ties = "breslow", control = ctl)
  b <- coef(f); V <- vcov(f); se <- sqrt(diag(V)); z <- b / se; q <- qnorm(1 - alpha / 2)
  M <- cbind(b, exp(b), se, z, 2 * (1 - pnorm(abs(z))), b - q * se, b + q * se)
  l0 <- f$loglik[1]; l <- f$loglik[2]; D <- length(b)
  S <- c(n, sum(e), l, -2 * l + 2 * D, 1 - exp(2 * (l0 - l) / n), 1 - exp(2 * l0 / n))
  lr <- 2 * (l - l0); wald <- drop(t(b) %*% solve(V, b)); sc <- f$score
  T <- rbind(c(wald, D, 1 - pchisq(wald, D)), c(lr, D, 1 - pchisq(lr, D)), c(sc, D, 1 - pchisq(sc, D)))
  list(M = M, S = S, T = T, V = V)
}
r <- fit(Surv(t, e) ~ x1 + x2 + x3, 0.05)
wmat("M.csv", r$M); wmat("S.csv", r$S); wmat("T.csv", r$T); wmat("COV.csv", r$V)
o <- order(t)
wmat("XO.csv", X[o, ]); wmat("RT.csv", match(t[o], unique(t[o])))
r2 <- fit(Surv(t, e) ~ x1 + x3, 0.1)
wmat("M2.csv", r2$M); wmat("T2.csv", r2$T)
