source("ref/_common.R")
wlines("error.txt", c("nonzero", "incSliceLine", "indicesRemoved must lie in 1..3 (the rows of oldX)"))
