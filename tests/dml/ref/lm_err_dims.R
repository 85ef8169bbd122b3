source("ref/_common.R")
# hand-written (no R counterpart): the stop() message of scripts/builtin/lmDS.dml
wlines("error.txt", c("nonzero", "lmDS", "dimension"))
