source("ref/_common.R")
# The orders are Java's HashSet<Double> iteration orders (SystemDS's
# unique), as tests/data/HashSetRef.java prints them for this X; the sets
# of values are R's unique() of all cells, of each row and of each column.
X <- matrix(c(3, 1, 3, 0, 2, 5, 2, 7, 9, 9, 1, 1), nrow = 3, byrow = TRUE)
rc <- c(1, 0, 2, 9, 5, 3, 7)
r <- rbind(c(1, 0, 3), c(2, 5, 7), c(1, 9, 0))
cc <- rbind(c(2, 1, 2, 0), c(9, 9, 1, 1), c(3, 5, 3, 7))
stopifnot(setequal(rc, unique(as.vector(t(X)))))
for (i in 1:3) stopifnot(setequal(r[i, r[i, ] != 0 | seq_len(3) <= length(unique(X[i, ]))], unique(X[i, ])))
for (j in 1:4) stopifnot(setequal(cc[seq_len(length(unique(X[, j]))), j], unique(X[, j])))
wmat("rc.csv", matrix(rc, ncol = 1))
wmat("r.csv", r)
wmat("c.csv", cc)
