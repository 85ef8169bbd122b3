source("ref/_common.R")
wlines("error.txt", c("nonzero", "cannot convert", "three"))
