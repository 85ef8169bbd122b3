source("ref/_common.R")
# hand-written: the shape error of lstm (kernels/dnn2.c)
wlines("error.txt", c("nonzero", "lstm", "dimension"))
