source("ref/_common.R")
wlines("error.txt", c("nonzero", "frameSort", "dimension"))
