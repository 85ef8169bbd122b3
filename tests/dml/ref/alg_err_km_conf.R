source("ref/_common.R")
wlines("error.txt", c("nonzero", "km", "conf_type must be \"plain\", \"log\" or \"log-log\", got \"arcsin\""))
