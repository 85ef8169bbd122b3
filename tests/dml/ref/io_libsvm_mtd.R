# io_libsvm_mtd: both files read back exactly (the matrix of the case).
source("ref/_common.R")
D <- matrix(c(0.5, 0, -2, 0, 1, 0, 1.5, 0, 7, -1, 0, 0, 0, 0, 0, 1e-5, 0, 0, 12345678, 1), nrow = 4, byrow = TRUE)
wmat("C.csv", D)
wmat("D.csv", D)
