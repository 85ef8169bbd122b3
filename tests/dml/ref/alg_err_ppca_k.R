source("ref/_common.R")
wlines("error.txt", c("nonzero", "ppca", "K must be at least 1, got 0"))
