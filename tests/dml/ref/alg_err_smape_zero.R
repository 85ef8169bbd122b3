source("ref/_common.R")
wlines("error.txt", c("nonzero", "smape", "both 0"))
