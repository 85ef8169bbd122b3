source("ref/_common.R")
# hand-written: the shape error of conv2d (kernels/dnn.c)
wlines("error.txt", c("nonzero", "conv2d", "dimension"))
