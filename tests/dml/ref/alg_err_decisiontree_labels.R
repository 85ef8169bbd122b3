source("ref/_common.R")
wlines("error.txt", c("nonzero", "decisionTree", "positive integer class codes"))
