source("ref/_common.R")
wlines("error.txt", c("nonzero", "gaussianClassifier", "labels must be integers 1..k"))
