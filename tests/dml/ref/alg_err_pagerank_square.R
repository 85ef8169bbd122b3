source("ref/_common.R")
wlines("error.txt", c("nonzero", "pageRank", "G must be a non-empty square matrix, got 3x4"))
