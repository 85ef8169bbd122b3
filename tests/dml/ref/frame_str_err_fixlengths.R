source("ref/_common.R")
wlines("error.txt", c("nonzero", "fixInvalidLengths", "ql=1.5"))
