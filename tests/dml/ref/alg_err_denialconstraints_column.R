source("ref/_common.R")
wlines("error.txt", c("nonzero", "denialConstraints", "no column named \"wage\" in dataFrame"))
