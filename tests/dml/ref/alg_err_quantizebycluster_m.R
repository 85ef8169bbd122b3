source("ref/_common.R")
wlines("error.txt", c("nonzero", "quantizeByCluster", "M must be at least 1, got 0"))
