source("ref/_common.R")
wlines("error.txt", c("nonzero", "psnr", "peak value is 0"))
