source("ref/_common.R")
wlines("error.txt", c("nonzero", "hospitalResidencyMatch", "dimension mismatch", "H must be 3x2"))
