source("ref/_common.R")
wlines("error.txt", c("nonzero", "shapExplainer", "partitions are not supported"))
