source("ref/_common.R")
# cv = TRUE (the last), to = 5 (the last)
wscalar("r.scalar", 1 + 10 * 1 + 1)
wscalar("s.scalar", sum(seq(1, 5)))
