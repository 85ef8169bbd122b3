source("ref/_common.R")
# hand-written: the stop() message of the builtin
wlines("error.txt", c("nonzero", "winsorize", "0 <= ql <= qu <= 1"))
