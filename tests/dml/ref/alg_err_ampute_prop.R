source("ref/_common.R")
wlines("error.txt", c("nonzero", "ampute", "prop must lie in (0, 1], got 1.2"))
