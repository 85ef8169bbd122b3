source("ref/_common.R")
wlines("error.txt", c("nonzero", "cspline", "strictly increasing"))
