source("ref/_common.R")
wlines("error.txt", c("nonzero", "einsum", "is 3 in one place and 2 in another (dimension mismatch)"))
