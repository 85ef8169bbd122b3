source("ref/_common.R")
wlines("error.txt", c("nonzero", "autoencoder_2layer", "dimension mismatch"))
