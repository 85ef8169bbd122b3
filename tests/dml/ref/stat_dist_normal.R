source("ref/_common.R")
z <- -3
P <- c(pnorm(z), pnorm(z, lower.tail = FALSE), pnorm(1.5, 1, 2), pnorm(1.5, 1, 2, lower.tail = FALSE),
       pnorm(0.7, 1.5, 2), pnorm(0.7, 1.5, 2, lower.tail = FALSE), pnorm(-20),
       pnorm(30, lower.tail = FALSE), pnorm(-37.5), pnorm(0), pnorm(8), pnorm(-3.05, -3, 0.01))
Q <- c(qnorm(0.975), qnorm(0.025), qnorm(0.3, 2, 3), qnorm(0.3, 2, 3), qnorm(0.5), qnorm(1e-300),
       qnorm(1e-10), qnorm(0.02425), qnorm(0.999999), qnorm(0), qnorm(1))
p <- 10^(-2 * (1:9))
q <- qnorm(p, 1, 0.5)
wmat("P.csv", P)
wmat("Q.csv", Q)
wmat("RT.csv", cbind(q, pnorm(q, 1, 0.5) / p))
