source("ref/_common.R")
wlines("error.txt", c("nonzero", "fixInvalidLengths", "ql=0.9"))
