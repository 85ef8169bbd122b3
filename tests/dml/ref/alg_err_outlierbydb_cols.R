source("ref/_common.R")
# hand-written: the stop() message of the builtin
wlines("error.txt", c("nonzero", "outlierByDB", "X has 2 columns but the model has 3"))
