source("ref/_common.R")
wlines("error.txt", c("nonzero", "GLM", "none is the no-label"))
