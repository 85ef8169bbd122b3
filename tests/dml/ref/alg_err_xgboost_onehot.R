source("ref/_common.R")
wlines("error.txt", c("nonzero", "xgboost", "categorical feature 1 must hold 0/1 (one-hot) values"))
