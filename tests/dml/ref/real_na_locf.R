source("ref/_common.R")
A <- matrix(c(1, 0, 2, 1, 3, 1, -1, 0, 0, 1, 5, 0), 6, byrow = TRUE)
y <- numeric(6); prev <- 0
for (i in 1:6) { prev <- A[i, 1] + A[i, 2] * prev; y[i] <- prev }
wmat("Y.csv", matrix(y, ncol = 1))
fill <- function(v) {   # forward, leading gaps from the first observation
  obs <- which(!is.na(v)); if (length(obs) == 0) return(rep(-1, length(v)))
  for (i in seq_along(v)) if (is.na(v[i])) v[i] <- if (any(obs < i)) v[max(obs[obs < i])] else v[min(obs)]
  v
}
X <- cbind(c(1, NA, NA, 4, 5, 6), rep(NA, 6), c(NA, 8, 9, 10, 11, NA))
wmat("F.csv", apply(X, 2, fill))
wmat("B.csv", apply(X[6:1, ], 2, fill)[6:1, ])
