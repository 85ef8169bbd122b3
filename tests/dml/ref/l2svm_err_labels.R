source("ref/_common.R")
# hand-written (no R counterpart): the stop() message of scripts/builtin/l2svm.dml
wlines("error.txt", c("nonzero", "L2SVM", "exactly one column"))
