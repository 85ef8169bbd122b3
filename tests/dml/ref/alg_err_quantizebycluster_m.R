source("ref/_common.R")
wlines("error.txt", c("nonzero", "quantizeByCluster", "M must lie in 1..3 (the columns of X), got 4"))
