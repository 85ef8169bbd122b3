source("ref/_common.R")
wlines("error.txt", c("nonzero", "must be two different single characters"))
