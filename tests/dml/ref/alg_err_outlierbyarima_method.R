source("ref/_common.R")
wlines("error.txt", c("nonzero", "outlierByArima", "repairMethod must be 0 (delete rows), 1 (zero) or 2 (NaN), got 5"))
