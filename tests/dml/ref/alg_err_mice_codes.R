source("ref/_common.R")
wlines("error.txt", c("nonzero", "mice", "categorical columns must hold integer codes 1..k (or NaN)"))
