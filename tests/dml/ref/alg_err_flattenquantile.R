source("ref/_common.R")
wlines("error.txt", c("nonzero", "flattenQuantile", "probabilities P must lie in [0, 1]"))
