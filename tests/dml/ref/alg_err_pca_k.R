source("ref/_common.R")
wlines("error.txt", c("nonzero", "PCA", "at least 1"))
