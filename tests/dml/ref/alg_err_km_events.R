source("ref/_common.R")
wlines("error.txt", c("nonzero", "km", "the event column must hold 0 (censored) and 1 (event)"))
