source("ref/_common.R")
wlines("error.txt", c("nonzero", "GLM", "responses must be positive"))
