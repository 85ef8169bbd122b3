source("ref/_common.R")
wlines("error.txt", c("nonzero", "deepWalk", "vertex 3 has no neighbour"))
