source("ref/_common.R")
# hand-written (no R counterpart): braid's error message
wlines("error.txt", c("nonzero", "qt", "lower.tail"))
