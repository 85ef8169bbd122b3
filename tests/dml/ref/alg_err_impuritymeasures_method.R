source("ref/_common.R")
wlines("error.txt", c("nonzero", "impurityMeasures", "method must be"))
