source("ref/_common.R")
# hand-written: the compile-time error of a call without a required shape
wlines("error.txt", c("nonzero", "dnn_err_args.dml:3:7", "pool_size"))
