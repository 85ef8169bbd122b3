source("ref/_common.R")
wlines("error.txt", c("nonzero", "ppca", "K must be between 1 and ncol(X) - 1 = 2, got 3"))
