source("ref/_common.R")
wlines("error.txt", c("nonzero", "deepWalk", "Graph must be a square adjacency matrix"))
