source("ref/_common.R")
# hand-written (no R counterpart): braid's message for the branch that runs
wlines("error.txt", c("nonzero", "real_err_branch_dims.dml:6", "dimension mismatch"))
