source("ref/_common.R")
wlines("error.txt", c("nonzero", "dedup", "at least two rows"))
