source("ref/_common.R")
wlines("error.txt", c("nonzero", "raGroupby", "method must be nested-loop or permutation-matrix"))
