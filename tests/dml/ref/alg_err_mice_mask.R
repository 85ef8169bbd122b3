source("ref/_common.R")
wlines("error.txt", c("nonzero", "mice", "cMask must be 1 x 3, got 1 x 2"))
