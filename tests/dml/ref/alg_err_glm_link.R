source("ref/_common.R")
wlines("error.txt", c("nonzero", "GLM", "supports only power links"))
