source("ref/_common.R")
wlines("error.txt", c("nonzero", "xgboost", "dimension mismatch: y must be 4 x 1, got 3 x 1"))
