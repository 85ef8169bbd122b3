source("ref/_common.R")
# hand-written: the stop() message of the builtin
wlines("error.txt", c("nonzero", "steplm", "icpt must be 0 or 1"))
