source("ref/_common.R")
wlines("error.txt", c("nonzero", "MSVM", "labels in Y must be integers 1..k"))
