source("ref/_common.R")
wlines("error.txt", c("nonzero", "cspline", "inp_x = 9.5 lies outside (1.0, 8.0]"))
