source("ref/_common.R")
wlines("error.txt", c("nonzero", "xgboostPredictRegression", "the model uses feature 2 but X has 1 columns"))
