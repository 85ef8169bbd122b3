source("ref/_common.R")
wlines("error.txt", c("nonzero", "garch", "X must be a column vector (n x 1), got 20x2"))
