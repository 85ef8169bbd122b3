source("ref/_common.R")
wlines("error.txt", c("nonzero", "imputeByKNN", "method must be \"dist\", \"dist_missing\" or \"dist_sample\", got \"kdtree\""))
