source("ref/_common.R")
wlines("error.txt", c("nonzero", "sliceLine", "dimension mismatch", "e must be 3 x 1"))
