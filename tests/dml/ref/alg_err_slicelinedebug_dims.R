source("ref/_common.R")
wlines("error.txt", c("nonzero", "sliceLineDebug.dml", "index out of bounds: row 2 of a dimension of size 1"))
