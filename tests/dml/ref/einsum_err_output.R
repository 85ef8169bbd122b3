source("ref/_common.R")
wlines("error.txt", c("nonzero", "einsum", "output letter 'z' of \"ij->iz\" is not in the operands"))
