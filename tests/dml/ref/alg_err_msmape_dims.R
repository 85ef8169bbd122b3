source("ref/_common.R")
wlines("error.txt", c("nonzero", "msmape", "dimension mismatch"))
