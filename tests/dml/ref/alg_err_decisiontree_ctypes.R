source("ref/_common.R")
wlines("error.txt", c("nonzero", "decisionTree", "ctypes must be a 1 x 3 row"))
