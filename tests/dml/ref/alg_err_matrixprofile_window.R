source("ref/_common.R")
wlines("error.txt", c("nonzero", "matrixProfile", "window_size must lie in 2..8"))
