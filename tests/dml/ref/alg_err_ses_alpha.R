source("ref/_common.R")
wlines("error.txt", c("nonzero", "ses", "alpha must lie in [0, 1], got 1.5"))
