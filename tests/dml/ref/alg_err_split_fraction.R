source("ref/_common.R")
wlines("error.txt", c("nonzero", "split", "strictly between 0 and 1"))
