source("ref/_common.R")
wlines("error.txt", c("nonzero", "adasyn", "beta must be in [0, 1], got 1.5"))
