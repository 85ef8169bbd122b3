source("ref/_common.R")
# hand-written (no R counterpart): the taken branch's shapes and sums
wlines("stdout.txt", c("1: 1x1 sum 1.0", "2: 2x1 sum 3.0", "3: 3x1 sum 6.0", "else: 0x1", "c 2x3 6.0, d 3x2 12.0"))
