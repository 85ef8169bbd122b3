source("ref/_common.R")
wlines("error.txt", c("nonzero", "mse", "dimension mismatch: X is 4x2 but Y is 4x3"))
