source("ref/_common.R")
wlines("error.txt", c("nonzero", "differenceStatistics", "dimension mismatch: X is 2x3 but Y is 3x2"))
