source("ref/_common.R")
wlines("error.txt", c("nonzero", "xgboost", "sml_type must be 1 (regression) or 2 (classification), got 3"))
