source("ref/_common.R")
wlines("error.txt", c("nonzero", "naiveBayes", "non-negative"))
