source("ref/_common.R")
wlines("error.txt", c("nonzero", "sliceLineExtract", "invalid number of slices to extract: 2 > 1"))
