source("ref/_common.R")
r1 <- 5 * 2 + 1
r2 <- (sum(c(1, 2, 3, 4)) - 1 - 99) + 25
r3 <- ((4 + 1) * 2 + 3) * 2 - 1
vs <- 4 * (7 / 2 * 4)
branch <- if (r1 > 10) "big" else "small"
wlines("stdout.txt", paste0("g=100 k=", jstr(2.5), " branch=", branch))
wmat("res.csv", matrix(c(r1, r2, 1, r3, 5, 50, vs), 1))
