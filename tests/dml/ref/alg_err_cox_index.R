source("ref/_common.R")
wlines("error.txt", c("nonzero", "cox", "column indexes in TE and F must lie in 1..3"))
