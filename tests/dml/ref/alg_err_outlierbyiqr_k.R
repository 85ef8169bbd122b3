source("ref/_common.R")
# hand-written: the stop() message of the builtin
wlines("error.txt", c("nonzero", "outlierByIQR", "repairMethod must be"))
