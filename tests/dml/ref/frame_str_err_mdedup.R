source("ref/_common.R")
wlines("error.txt", c("nonzero", "mdedup", "feature values should be less than 2"))
