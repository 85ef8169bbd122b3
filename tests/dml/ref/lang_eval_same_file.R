source("ref/_common.R")
# hand-written (no R counterpart): the printed lines of the case
wlines("stdout.txt", c("double: 8.000 10.000", "", "square: 16.000 25.000"))
