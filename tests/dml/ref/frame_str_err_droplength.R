source("ref/_common.R")
wlines("error.txt", c("nonzero", "dropInvalidLength", "dimension"))
