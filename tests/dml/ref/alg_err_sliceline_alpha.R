source("ref/_common.R")
wlines("error.txt", c("nonzero", "sliceLine", "alpha must lie in [0, 1]"))
