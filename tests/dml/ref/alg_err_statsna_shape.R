source("ref/_common.R")
wlines("error.txt", c("nonzero", "statsNA", "X must be a non-empty column vector, got 4x2"))
