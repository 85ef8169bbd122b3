source("ref/_common.R")
source("ref/_frame.R")
X <- matrix(c(1, 2.5, 3, 4, 5, 6.25), 3, 2, byrow = TRUE)
Fc <- list(X[, 1], X[, 2])
ff <- c("FP64", "FP64")
gt <- c("STRING", "INT64", "FP64", "BOOLEAN")
G <- list(c("a", "a"), c(1, 1), c(2.5, 2.5), c(TRUE, TRUE))
H <- list(c("x", "x"), c("x", "x"))
out <- c(
  fstr(Fc, ff),
  "3 2 6 Frame",
  fstr(G, gt),
  fstr(H, c("STRING", "STRING")),
  fstr(list(1, 2.5, TRUE), gt[2:4]),                     # G[2, 2:4]: names renumbered
  fstr(list(X[2:3, 1], X[2:3, 2]), ff),
  paste("a", "1", "TRUE", jstr(2.5 * 2)),
  fstr(c(G, H), c(gt, "STRING", "STRING"), sep = "|"))
wmat("R.csv", rbind(X, X[1, ]))
F2 <- X
F2[, 1] <- c(100, 200, 300)
wmat("F.csv", F2)
G2 <- list(c("a", "b"), c(7, 1), c(0.5, 2.5), c(TRUE, TRUE))
out <- c(out, fstr(G2, gt))
# detectSchema: 0/1 and true/false are BOOLEAN, integers INT64, other numbers FP64
D <- list(c("1", "0"), c("2.5", "-3"), c("x", "y"), c("true", "FALSE"), c("7", "12"))
S <- c("BOOLEAN", "FP64", "STRING", "BOOLEAN", "INT64")
out <- c(out, fstr(lapply(S, identity), rep("STRING", 5)))
A <- list(c(TRUE, FALSE), c(2.5, -3), c("x", "y"), c(TRUE, FALSE), c(7, 12))
out <- c(out, fstr(A, S))
wlines("stdout.txt", out)
wmat("M.csv", matrix(4, 2, 2))
wscalar("n.scalar", 3)
