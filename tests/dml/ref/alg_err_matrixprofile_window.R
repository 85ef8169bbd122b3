source("ref/_common.R")
wlines("error.txt", c("nonzero", "matrixProfile", "windowSize must lie in 2..8"))
