source("ref/_common.R")
wlines("error.txt", c("nonzero", "PCA", "between 1 and ncol(X)"))
