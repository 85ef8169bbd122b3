source("ref/_common.R")
# hand-written (no R counterpart; R also compares a number with a string
# as strings): the printed lines of the case
wlines("stdout.txt", c("reg != L2: TRUE", "L2 == reg: FALSE", "3 == '3': TRUE", "2.5 < 'a': TRUE"))
