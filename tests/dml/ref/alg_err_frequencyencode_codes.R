source("ref/_common.R")
wlines("error.txt", c("nonzero", "frequencyEncode", "column 2 is categorical but not recoded"))
