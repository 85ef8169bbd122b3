source("ref/_common.R")
wlines("error.txt", c("nonzero", "decisionTree", "label vector y is not properly recoded/binned"))
