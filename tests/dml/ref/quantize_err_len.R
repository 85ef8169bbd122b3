source("ref/_common.R")
wlines("error.txt", c("nonzero", "quantize_compress", "one factor per row of X (4), got 3x1"))
