source("ref/_common.R")
wlines("error.txt", c("nonzero", "ALS", "regType must be"))
