source("ref/_common.R")
wlines("error.txt", c("nonzero", "img_posterize", "bits must lie in 1..8"))
