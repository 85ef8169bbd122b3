source("ref/_common.R")
wlines("error.txt", c("nonzero", "decisionTree", "impurity must be"))
