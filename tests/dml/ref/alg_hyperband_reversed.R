source("ref/_common.R")
# properties of the draws (see the case): both hold
wscalar("ok.scalar", TRUE)
wscalar("rand.scalar", TRUE)
