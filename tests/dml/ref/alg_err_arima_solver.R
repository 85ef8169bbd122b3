source("ref/_common.R")
wlines("error.txt", c("nonzero", "arima", "solver must be \"jacobi\" or \"cg\", got \"lu\""))
