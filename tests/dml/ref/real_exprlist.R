source("ref/_common.R")
# hand-written stdout: frame cells as DML prints them
wlines("stdout.txt", c("2 4 abc 2.5", "0 3"))
wmat("M.csv", matrix(c(4, 6), 2))
C <- cbind(c(1, 1), matrix(c(2, 3, 4, 5), 2, byrow = TRUE))
wmat("C.csv", C)
wmat("R.csv", rbind(matrix(1, 1, 3), matrix(2, 2, 3), C))
