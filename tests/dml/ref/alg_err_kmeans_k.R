source("ref/_common.R")
wlines("error.txt", c("nonzero", "kmeans", "between 1 and nrow(X)"))
