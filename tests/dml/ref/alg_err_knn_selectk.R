source("ref/_common.R")
wlines("error.txt", c("nonzero", "knn", "select_k and select_feature are not supported"))
