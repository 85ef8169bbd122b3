source("ref/_common.R")
wlines("error.txt", c("nonzero", "raJoin", "colB must lie in 1..2, got 3"))
