source("ref/_common.R")
wlines("error.txt", c("nonzero", "ema", "triple smoothing needs at least 8 rows, got 7"))
