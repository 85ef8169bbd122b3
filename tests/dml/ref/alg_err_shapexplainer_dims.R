source("ref/_common.R")
wlines("error.txt", c("nonzero", "shapExplainer", "x_instances has 3 columns but X_bg has 4"))
