source("ref/_common.R")
wlines("error.txt", c("nonzero", "adasyn", "Y must hold exactly two classes, got 3"))
