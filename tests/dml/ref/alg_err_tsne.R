source("ref/_common.R")
wlines("error.txt", c("nonzero", "tSNE", "perplexity must lie in [1, 10)"))
