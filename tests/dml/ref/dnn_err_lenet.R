source("ref/_common.R")
# hand-written: the shape check of lenetTrain (scripts/builtin/lenetTrain.dml)
wlines("error.txt", c("nonzero", "lenetTrain", "dimension"))
