source("ref/_common.R")
# hand-written stdout: list length and items read back
wlines("stdout.txt", c("7 7 2.5 TRUE hi", "b 3 2 4"))
W <- matrix(1:6, 2, byrow = TRUE)
wmat("R.csv", rbind(W, W, W))
