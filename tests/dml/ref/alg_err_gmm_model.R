source("ref/_common.R")
wlines("error.txt", c("nonzero", "gmm", "model must be one of VVV, EEE, VVI, VII"))
