source("ref/_common.R")
wmat("r.csv", matrix(c(1, 0, 0, 1, 1, 0, 1, 0, 1), ncol = 1))
