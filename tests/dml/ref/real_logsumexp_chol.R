source("ref/_common.R")
M <- matrix(c(1, 2, 3, -Inf, -Inf, -Inf, 1000, 1000, 0, -1, 0.5, 2), 4, byrow = TRUE)
lse <- function(x) { m <- max(x); if (m == -Inf) return(-Inf); m + log(sum(exp(x - m))) }
wmat("r.csv", matrix(apply(M, 1, lse), ncol = 1))
wmat("c.csv", matrix(apply(M[1:2, ], 2, lse), nrow = 1))
wscalar("a.scalar", lse(M[1, ]))
A <- matrix(c(4, 2, 0.6, 2, 5, 1.5, 0.6, 1.5, 3), 3, byrow = TRUE)
wmat("L.csv", t(chol(A)))
