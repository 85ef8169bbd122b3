source("ref/_common.R")
wlines("error.txt", c("nonzero", "MSVM", "negative values"))
