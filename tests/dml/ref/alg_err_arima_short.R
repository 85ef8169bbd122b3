source("ref/_common.R")
wlines("error.txt", c("nonzero", "arima", "the series is too short: 7 values leave 1 residuals for 4 coefficients"))
