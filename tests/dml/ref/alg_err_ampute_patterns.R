source("ref/_common.R")
wlines("error.txt", c("nonzero", "ampute", "patterns must have 3 columns (one per column of X), got 1 x 2"))
