source("ref/_common.R")
wlines("error.txt", c("nonzero", "knnGraph", "k must lie in 1..4 (the rows of X but one), got 5"))
