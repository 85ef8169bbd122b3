source("ref/_common.R")
wlines("error.txt", c("nonzero", "randomForest", "only one class label"))
