source("ref/_common.R")
wlines("error.txt", c("nonzero", "discoverFD", "every value a positive integer code"))
