source("ref/_common.R")
wscalar("s.scalar", 18)
