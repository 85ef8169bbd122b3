source("ref/_common.R")
source("ref/_refdata.R")
# km vs R's survival package: survfit (event rows of summary(), conf.type
# log / plain / log-log, median and its limits by quantile()) and survdiff
# (log-rank, with strata); Peto's standard error and the Gehan-Wilcoxon
# test written out in R.
suppressMessages(library(survival))
set.seed(7)
n <- 48
t <- round(rexp(n, 0.08), 1); e <- rbinom(n, 1, 0.75)
g <- rep(1:3, 16); s <- rep(c(1, 1, 2, 2), 12)
t[c(5, 17)] <- t[c(6, 18)]                       # ties
for (gg in 1:3) for (ss in 1:2) {                # last time of each cell censored
  i <- which(g == gg & s == ss); e[i[which.max(t[i])]] <- 0
}
X <- cbind(t, e, g * 10, s)
wref("X", X)

block <- function(tt, ee, ctype, err = "greenwood") {
  f <- survfit(Surv(tt, ee) ~ 1, conf.type = ctype)
  sm <- summary(f)
  se <- sm$std.err
  lo <- sm$lower; hi <- sm$upper
  if (err == "peto") {
    se <- sm$surv * sqrt((1 - sm$surv) / sm$n.risk)
    z <- qnorm(0.975)
    lo <- pmax(exp(log(sm$surv) - z * se / sm$surv), 0); hi <- pmin(exp(log(sm$surv) + z * se / sm$surv), 1)
  }
  q <- quantile(f, 0.5)
  list(B = cbind(sm$time, sm$n.risk, sm$n.event, sm$surv, se, lo, hi),
       med = c(q$quantile, q$lower, q$upper))
}
pad <- function(L) {
  r <- max(sapply(L, nrow))
  do.call(cbind, lapply(L, function(B) rbind(B, matrix(0, r - nrow(B), 7))))
}
nan <- function(v) { v[is.na(v)] <- NaN; v }
# one group, log
b <- block(t, e, "log")
wmat("o1.csv", b$B)
wmat("m1.csv", matrix(nan(c(sum(e), b$med)), nrow = 1))
# groups (column 3), log-rank
Bs <- list(); Ms <- NULL
for (gg in 1:3) {
  i <- g == gg; b <- block(t[i], e[i], "log")
  Bs[[gg]] <- b$B; Ms <- rbind(Ms, nan(c(gg * 10, sum(i), sum(e[i]), b$med)))
}
wmat("o2.csv", pad(Bs)); wmat("m2.csv", Ms)
sd2 <- survdiff(Surv(t, e) ~ g)
V <- sd2$var
U <- sd2$obs - sd2$exp
wmat("t2.csv", matrix(c(3, 2, sd2$chisq, 1 - pchisq(sd2$chisq, 2)), nrow = 1))
wmat("tg2.csv", cbind(sd2$obs, sd2$exp))   # O and E of T (SystemDS's layout)
# groups and strata (column 4), plain intervals, stratified log-rank
Bs <- list(); Ms <- NULL; c <- 0
for (ss in 1:2) for (gg in 1:3) {   # stratum-major, as SystemDS
  i <- g == gg & s == ss; b <- block(t[i], e[i], "plain"); c <- c + 1
  Bs[[c]] <- b$B; Ms <- rbind(Ms, nan(c(gg * 10, ss, sum(i), sum(e[i]), b$med)))
}
wmat("o3.csv", pad(Bs)); wmat("m3.csv", Ms)
sd3 <- survdiff(Surv(t, e) ~ g + strata(s))
U <- rowSums(as.matrix(sd3$obs)) - rowSums(as.matrix(sd3$exp))
wmat("t3.csv", matrix(c(3, 2, sd3$chisq, 1 - pchisq(sd3$chisq, 2)), nrow = 1))
# log-log intervals as SystemDS's km computes them, S^exp(-+ z se / log S)
# clipped to [0, 1] (survfit divides se by S log S), one group
b4 <- block(t, e, "log")$B
z <- qnorm(0.975); S4 <- b4[, 4]; se4 <- b4[, 5]
b4[, 6] <- pmax(S4^exp(-z * se4 / log(S4)), 0); b4[, 7] <- pmin(S4^exp(z * se4 / log(S4)), 1)
wmat("o4.csv", b4)
# Peto's standard errors, one group
wmat("o5.csv", block(t, e, "log", "peto")$B)
# Gehan-Wilcoxon: weights n at risk, two groups (1 vs 2 and 3 merged)
g2 <- ifelse(g == 1, 1, 2)
ut <- sort(unique(t[e == 1])); O <- c(0, 0); E <- c(0, 0); V <- matrix(0, 2, 2)
for (tt in ut) {
  nr <- sapply(1:2, function(k) sum(t >= tt & g2 == k)); dd <- sapply(1:2, function(k) sum(t == tt & e == 1 & g2 == k))
  N <- sum(nr); D <- sum(dd); w <- N
  O <- O + w * dd; E <- E + w * nr * D / N
  f <- w^2 * D * (N - D) / max(N - 1, 1); P <- nr / N
  V <- V + f * (diag(P) - P %o% P)
}
st <- (O[1] - E[1])^2 / V[1, 1]
wmat("t6.csv", matrix(c(2, 1, st, 1 - pchisq(st, 1)), nrow = 1))
wmat("tg6.csv", cbind(O, E))   # the case rescales SystemDS's O / n, E / n
wlines("stdout.txt", "no test: TRUE 1x1")
