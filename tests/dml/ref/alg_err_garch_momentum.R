source("ref/_common.R")
wlines("error.txt", c("nonzero", "garch", "momentum must lie in [0, 1), got 1.0"))
