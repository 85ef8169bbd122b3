source("ref/_common.R")
source("ref/_refdata.R")
# Min-max normalization with constant columns mapped to 0, and R's scale()
# (constant columns divided by 1, as DML's scale) applied to other rows.
d <- read_data("wine")
X <- cbind(d$X, 3)
Xtr <- X[1:120, ]
Xte <- X[121:178, ]
cmin <- apply(Xtr, 2, min)
cmax <- apply(Xtr, 2, max)
rng <- cmax - cmin
rng[rng == 0] <- 1
norm <- function(A) sweep(sweep(A, 2, cmin), 2, rng, "/")
wmat("Y.csv", norm(Xtr))
wmat("cmin.csv", matrix(cmin, nrow = 1))
wmat("cmax.csv", matrix(cmax, nrow = 1))
wmat("Yte.csv", norm(Xte))
wscalar("minmax_same.scalar", TRUE)
wscalar("one_row_zero.scalar", TRUE)
mu <- colMeans(Xtr)
s <- apply(Xtr, 2, sd)
s[s == 0] <- 1
wmat("scaled_te.csv", sweep(sweep(Xte, 2, mu), 2, s, "/"))
wscalar("apply_same.scalar", TRUE)
