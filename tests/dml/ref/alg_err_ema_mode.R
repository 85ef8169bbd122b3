source("ref/_common.R")
wlines("error.txt", c("nonzero", "ema", "mode must be \"single\", \"double\" or \"triple\""))
