source("ref/_common.R")
n <- 40
X <- sin(0.3 * outer(1:n, 1:3)) + cos((1:n) / 7)
y <- as.vector(X %*% c(1, -2, 0.5) + sin(1:n) / 4)
tr <- 1:30; te <- 31:n
regs <- 10^(1:-3)
loss <- sapply(regs, function(r) {
  b <- lm_ref(X[tr, ], y[tr], 0, r)
  sum((y[te] - X[te, ] %*% b)^2)
})
best <- max(which(loss == min(loss)))
wmat("B.csv", matrix(c(lm_ref(X[tr, ], y[tr], 0, regs[best]), 0), ncol = 1))
wscalar("reg.scalar", regs[best])
wmat("s.csv", matrix(c(21, 7, 3), ncol = 1))
