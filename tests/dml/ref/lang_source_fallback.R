source("ref/_common.R")
# hand-written (no R counterpart): the value the sourced helper computes
wscalar("twice.scalar", 42)
