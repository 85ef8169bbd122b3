source("ref/_common.R")
# SystemDS's hash join: P1 has one row per matching pair (4) and as many
# columns as the last matched row of A (3); A is 4 x 2.
wlines("error.txt", c("nonzero", "matrix multiplication dimension mismatch: 4x3 %*% 4x2"))
