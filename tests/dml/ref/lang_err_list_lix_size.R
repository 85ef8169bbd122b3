source("ref/_common.R")
wlines("error.txt", c("nonzero", "cases/lang_err_list_lix_size.dml:4:",
                      "list left indexing: size mismatch"))
