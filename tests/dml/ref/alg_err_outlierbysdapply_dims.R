source("ref/_common.R")
wlines("error.txt", c("nonzero", "outlierBySdApply", "colMean and colSD must be 1 x 3"))
