source("ref/_common.R")
P <- c(pt(2, 5), pt(-3, 1), pt(6, 3, lower.tail = FALSE), pt(-40, 10), pt(1.7, 1e9),
       pt(2.5, 30, lower.tail = FALSE), pt(1.3, 2),
       pf(3.1, 3, 20), pf(3.1, 3, 20, lower.tail = FALSE), pf(1e-12, 30, 1e6),
       pf(1.0001, 2147483647, 2147483647, lower.tail = FALSE),
       pchisq(3.84, 1), pchisq(500, 10, lower.tail = FALSE), pchisq(1e-10, 3), pchisq(1100, 1000),
       pexp(2, 0.5), pexp(1, lower.tail = FALSE), pexp(40, 3, lower.tail = FALSE), pt(-1, 10000))
Q <- c(qt(0.975, 10), qt(0.01, 1), qt(1e-50, 5), qt(0.3, 30), qt(0.975, 1e9),
       qf(0.95, 3, 20), qf(0.5, 1, 1), qf(0.05, 10, 30),
       qchisq(0.95, 3), qchisq(1e-20, 2), qchisq(0.5, 1e6),
       qexp(0.5, 2), qexp(0.999), qchisq(1, 4), qexp(0))
wmat("P.csv", P)
wmat("Q.csv", Q)
