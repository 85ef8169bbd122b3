source("ref/_common.R")
wlines("error.txt", c("nonzero", "mape", "must not contain 0"))
