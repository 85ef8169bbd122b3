source("ref/_common.R")
wlines("error.txt", c("nonzero", "map", "unsupported construct", "intern"))
