source("ref/_common.R")
wlines("error.txt", c("nonzero", "lineage", "lineage trace unavailable"))
