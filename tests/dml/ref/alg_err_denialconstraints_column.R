source("ref/_common.R")
wlines("error.txt", c("nonzero", "denialConstraints", "no variable \"wage\" to group by"))
