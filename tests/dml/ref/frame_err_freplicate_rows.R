source("ref/_common.R")
wlines("error.txt", c("nonzero", "freplicate", "the row to replicate must be a frame of one row, got 2 rows"))
