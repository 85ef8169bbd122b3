source("ref/_common.R")
wlines("error.txt", c("nonzero", "paramserv", "model must be a list, not a matrix"))
