source("ref/_common.R")
wlines("error.txt", c("nonzero", "paramserv", "unsupported utype 'HOGWILD'"))
