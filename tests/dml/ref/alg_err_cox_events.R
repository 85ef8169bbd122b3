source("ref/_common.R")
wlines("error.txt", c("nonzero", "cox", "no events: the model cannot be fitted"))
