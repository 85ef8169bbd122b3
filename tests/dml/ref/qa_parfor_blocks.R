source("ref/_common.R")
n <- 120; bs <- 30
X <- matrix(1:(n * 4), n, 4, byrow = TRUE) / 7
B <- matrix(0, n, 4); C <- matrix(-1, 4, n)
for (b in 1:4) {
  r <- ((b - 1) * bs + 1):(b * bs)
  blk <- X[r, ]
  B[r, ] <- blk * b + sin(blk)
  C[, r] <- t(blk) - b
}
S <- outer(1:8, 1:3, function(i, j) i * 100 + j)
wmat("B.csv", B)
wmat("C.csv", C)
wmat("S.csv", S)
