# lang_assign_no_output: sums of a 2x2 matrix of ones times 1, 2, then 1.
source("ref/_common.R")
wlines("stdout.txt", c(sprintf("sum %.1f", c(4, 8, 4)), "done"))
