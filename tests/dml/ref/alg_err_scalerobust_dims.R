source("ref/_common.R")
wlines("error.txt", c("nonzero", "scaleRobustApply", "dimension mismatch"))
