source("ref/_common.R")
wlines("error.txt", c("nonzero", "glove", "vector_size"))
