source("ref/_common.R")
wlines("error.txt", c("nonzero", "tokenize", "tokenize_col", "index"))
