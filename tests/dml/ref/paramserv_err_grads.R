source("ref/_common.R")
wlines("error.txt", c("nonzero", "paramserv", "update function 'bad' must return a list, not a matrix"))
