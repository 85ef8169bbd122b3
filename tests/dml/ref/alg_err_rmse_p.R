source("ref/_common.R")
wlines("error.txt", c("nonzero", "rmse", "probabilities P must lie in [0, 1]"))
