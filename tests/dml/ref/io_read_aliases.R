# io_read_aliases: X %*% X for the 3x3 matrix the case writes and reads back.
source("ref/_common.R")
X <- matrix(c(1, 0, 2, 0, 3, 0, 0, 0, 4), 3, 3, byrow = TRUE)
wmat("AB.csv", X %*% X)
