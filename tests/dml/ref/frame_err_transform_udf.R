source("ref/_common.R")
wlines("error.txt", c("nonzero", "cases/frame_err_transform_udf.dml:3:",
                      "udf: unknown function 'nope'"))
