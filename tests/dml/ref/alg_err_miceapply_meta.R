source("ref/_common.R")
wlines("error.txt", c("nonzero", "miceApply", "meta from mice must have 3 or more rows and the columns of X, got 3x3 for 4 columns"))
