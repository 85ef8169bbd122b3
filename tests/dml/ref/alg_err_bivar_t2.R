source("ref/_common.R")
wlines("error.txt", c("nonzero", "bivar", "Column 2.0 was declared as nominal but its minimum value is 0.0"))
