source("ref/_common.R")
wlines("error.txt", c("nonzero", "valueSwap", "unknown value type", "TEXT"))
