source("ref/_common.R")
# hand-written (no R counterpart): the printed line of the case
wlines("stdout.txt", "twice: 42.0")
