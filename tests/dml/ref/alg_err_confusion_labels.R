source("ref/_common.R")
wlines("error.txt", c("nonzero", "confusionMatrix", "integers >= 1"))
