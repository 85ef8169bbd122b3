source("ref/_common.R")
# hand-written (no R counterpart): braid's message for runaway recursion
wlines("error.txt", c("nonzero", "qa_err_deep_recursion.dml", "infinite recursion", "'rec'"))
