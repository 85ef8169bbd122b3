source("ref/_common.R")
wlines("error.txt", c("nonzero", "decisionTree", "scale label", "rss"))
