source("ref/_common.R")
wlines("error.txt", c("nonzero", "tokenize", "num_features"))
