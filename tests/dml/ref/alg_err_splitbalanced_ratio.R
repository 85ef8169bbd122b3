source("ref/_common.R")
wlines("error.txt", c("nonzero", "splitBalanced", "splitRatio must lie in [0, 1]"))
