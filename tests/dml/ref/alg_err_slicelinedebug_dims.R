source("ref/_common.R")
wlines("error.txt", c("nonzero", "sliceLineDebug", "TKC has 1 rows but TK has 2"))
