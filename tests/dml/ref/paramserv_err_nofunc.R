source("ref/_common.R")
wlines("error.txt", c("nonzero", "paramserv", "unknown upd function 'ps::nosuch'"))
