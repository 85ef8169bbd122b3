source("ref/_common.R")
wlines("error.txt", c("nonzero", "imputeByFD", "column vectors of the same length, got 4 x 1 and 3 x 1"))
