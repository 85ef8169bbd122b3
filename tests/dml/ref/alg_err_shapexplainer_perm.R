source("ref/_common.R")
wlines("error.txt", c("nonzero", "shapExplainer", "n_permutations must be at least 1, got 0"))
