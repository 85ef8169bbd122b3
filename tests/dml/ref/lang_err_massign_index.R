source("ref/_common.R")
wlines("error.txt", c("nonzero", "cases/lang_err_massign_index.dml:5:2:",
                      "left indexing in the targets of a multi-assignment is not supported"))
