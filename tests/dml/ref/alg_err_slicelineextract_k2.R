source("ref/_common.R")
wlines("error.txt", c("nonzero", "sliceLineExtract", "k2 must lie in 0..1 (the slices in TK), got 2"))
