source("ref/_common.R")
wlines("error.txt", c("nonzero", "knn", "selectK and selectFeature are not supported"))
