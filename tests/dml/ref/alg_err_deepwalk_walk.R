source("ref/_common.R")
wlines("error.txt", c("nonzero", "deepWalk", "t >= 1"))
