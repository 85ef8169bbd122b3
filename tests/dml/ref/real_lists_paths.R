source("ref/_common.R")
# hand-written stdout: list lengths, the removed string, sum of the removed matrix
wlines("stdout.txt", c(paste0("2 two 1 ", jstr(20), " 1")))
wmat("Y.csv", matrix(c(2, 4, 6), 1))
T <- matrix(0, 3, 3); T[1, 1] <- 1; T[2, 1] <- 1; T[2, 2] <- 1; T[3, 2] <- 1
wmat("T.csv", T)
