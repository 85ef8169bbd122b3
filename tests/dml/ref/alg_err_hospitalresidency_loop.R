source("ref/_common.R")
wlines("error.txt", c("nonzero", "hospitalResidencyMatch", "SystemDS's procedure does not end on this input"))
