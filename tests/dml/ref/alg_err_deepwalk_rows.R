source("ref/_common.R")
wlines("error.txt", c("nonzero", "deepWalk", "at least 3 vertices"))
