source("ref/_common.R")
wlines("error.txt", c("nonzero", "mdedup", "index out of bounds"))
