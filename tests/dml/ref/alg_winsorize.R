source("ref/_common.R")
source("ref/_refdata.R")
# Column-wise clamping to R's type-1 quantiles (the ceil(p n)-th smallest).
d <- read_data("wine")
Xtr <- d$X[1:150, ]
Xte <- d$X[151:178, ]
wins <- function(A, lo, hi) {
  for (j in seq_len(ncol(A))) A[, j] <- pmin(pmax(A[, j], lo[j]), hi[j])
  A
}
q <- function(p) apply(Xtr, 2, function(c) quantile(c, p, type = 1, names = FALSE))
ql <- q(0.05); qu <- q(0.95)
wmat("Y.csv", wins(Xtr, ql, qu))
wmat("ql.csv", matrix(ql, nrow = 1))
wmat("qu.csv", matrix(qu, nrow = 1))
wmat("Yte.csv", wins(Xte, ql, qu))
wmat("Y2.csv", wins(Xtr, q(0.1), q(0.8)))
wscalar("identity.scalar", TRUE)
