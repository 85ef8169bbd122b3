source("ref/_common.R")
wlines("error.txt", c("nonzero", "tSNE", "reduced_dims must be at least 1, got 0"))
