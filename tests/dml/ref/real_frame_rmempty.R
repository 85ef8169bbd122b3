source("ref/_common.R")
# hand-written stdout: shapes and cells of the reduced frames
wlines("stdout.txt", c("2x3 b 1", "4x2 1", "2x3", "3 2 1"))
M <- matrix(c(1, 0, 2, 0, 0, 0, 3, 0, 4), 3, byrow = TRUE)
wmat("R.csv", M[rowSums(M != 0) > 0, , drop = FALSE])
wmat("C.csv", M[, colSums(M != 0) > 0, drop = FALSE])
