source("ref/_common.R")
# hand-written (no R counterpart): braid's message for an operation over the memory budget
wlines("error.txt", c("nonzero", "real_err_too_large.dml:3", "needs 8000.0 GB", "distributed execution is not available"))
