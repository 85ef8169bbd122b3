source("ref/_common.R")
wlines("error.txt", c("nonzero", "xgboost", "classification labels must be 0 or 1"))
