source("ref/_common.R")
wlines("error.txt", c("nonzero", "mcc", "dimension mismatch: 5 predictions but 4 labels"))
