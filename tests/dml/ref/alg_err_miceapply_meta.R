source("ref/_common.R")
wlines("error.txt", c("nonzero", "miceApply", "meta must be 2 x 4 (the columns of X), got 2x2"))
