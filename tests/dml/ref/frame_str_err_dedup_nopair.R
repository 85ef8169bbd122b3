source("ref/_common.R")
wlines("error.txt", c("nonzero", "dedup", "no candidate pair"))
