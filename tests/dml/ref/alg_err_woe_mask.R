source("ref/_common.R")
wlines("error.txt", c("nonzero", "WoE", "dimension mismatch"))
