source("ref/_common.R")
wlines("error.txt", c("nonzero", "randomForest", "sample_frac must lie in (0, 1]"))
