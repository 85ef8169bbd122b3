source("ref/_common.R")
# hand-written (no R counterpart): braid's message for X[0, 1]
wlines("error.txt", c("nonzero", "qa_err_index_zero.dml:6", "index out of bounds: row 0 of a dimension of size 3"))
