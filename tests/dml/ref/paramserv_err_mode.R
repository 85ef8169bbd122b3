source("ref/_common.R")
wlines("error.txt", c("nonzero", "paramserv", "mode 'REMOTE_SPARK' is not supported"))
