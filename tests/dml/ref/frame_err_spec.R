source("ref/_common.R")
wlines("error.txt", c("nonzero", "color", "not in the frame"))
