source("ref/_common.R")
wlines("error.txt", c("nonzero", "cases/frame_err_catmask_bow.dml:3:",
                      "unsupported transform method 'bag_of_words'"))
