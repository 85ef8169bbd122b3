source("ref/_common.R")
wlines("error.txt", c("nonzero", "paramserv", "num_backup_workers must be in 0..k-1 (k = 2), got 2"))
