source("ref/_common.R")
wlines("error.txt", c("nonzero", "raSelection", "op must be one of"))
