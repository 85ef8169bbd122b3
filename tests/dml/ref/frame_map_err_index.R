source("ref/_common.R")
wlines("error.txt", c("nonzero", "map", "index out of range", "row 2, column 1"))
