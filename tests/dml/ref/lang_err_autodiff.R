source("ref/_common.R")
wlines("error.txt", c("nonzero", "cases/lang_err_autodiff.dml:6:",
                      "the instruction \"-\" has no derivative here"))
