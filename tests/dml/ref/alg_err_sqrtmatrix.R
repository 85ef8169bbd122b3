source("ref/_common.R")
wlines("error.txt", c("nonzero", "sqrtMatrix", "A must be square, got 2x3"))
