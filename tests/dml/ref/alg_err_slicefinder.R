source("ref/_common.R")
wlines("error.txt", c("nonzero", "sliceLine", "e must be 3 x 1"))
