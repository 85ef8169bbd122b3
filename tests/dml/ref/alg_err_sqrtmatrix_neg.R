source("ref/_common.R")
wlines("error.txt", c("nonzero", "sqrtMatrix", "negative eigenvalue", "no real square root"))
