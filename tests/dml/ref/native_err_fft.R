source("ref/_common.R")
# hand-written: the dimension error of fft (kernels/fft.c)
wlines("error.txt", c("nonzero", "fft", "dimension"))
