source("ref/_common.R")
wlines("error.txt", c("nonzero", "arima", "the series is too short: 4 values after differencing for lags up to 4"))
