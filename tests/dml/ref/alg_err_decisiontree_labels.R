source("ref/_common.R")
wlines("error.txt", c("nonzero", "decisionTree", "y must hold recoded positive labels"))
