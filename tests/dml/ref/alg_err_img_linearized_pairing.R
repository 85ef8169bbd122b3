source("ref/_common.R")
wlines("error.txt", c("nonzero", "img_sample_pairing_linearized", "img_in2 must be one image of 1 x 9, got 2x9"))
