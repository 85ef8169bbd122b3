source("ref/_common.R")
wlines("error.txt", c("nonzero", "hyperband", "only the lmCG parameters reg and tol can be tuned"))
