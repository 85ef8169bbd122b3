source("ref/_common.R")
# recode codes in order of first appearance: b = 1, a = 2; then 2 x + 10
X <- cbind(c(1, 2, 1), c(1, 2, 3)) * 2 + 10
Y <- cbind(c(2, 1), c(5, 6)) * 2 + 10
wmat("X.csv", X)
wmat("Y.csv", Y)
