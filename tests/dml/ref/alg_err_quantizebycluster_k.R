source("ref/_common.R")
wlines("error.txt", c("nonzero", "quantizeByCluster", "k must not exceed the 5 rows of X, got 6"))
