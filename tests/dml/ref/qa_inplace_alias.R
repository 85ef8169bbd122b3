source("ref/_common.R")
n <- 2000
v <- numeric(n)
for (i in 2:n) v[i] <- v[i - 1] * 0.5 + 1
u <- rep(1, 5); olds <- numeric(5)
for (i in 1:5) { u2 <- u; u[i] <- u[i] * 10 + i; olds[i] <- sum(u2) }
z <- rep(1, 4)
for (i in 1:4) z[i] <- sum(z) + z[i]
q <- rep(1, 3); keep <- numeric(3)
for (i in 1:3) { r <- q; q[i] <- r[i] + sum(r); keep[i] <- sum(r) }
M <- matrix(0, 3, 3)
for (i in 1:3) for (j in 1:3) M[i, j] <- i * 10 + j + sum(M[i, ])
wmat("v.csv", v[1995:2000])
wscalar("w.scalar", 0)
wmat("u.csv", u)
wmat("olds.csv", olds)
wmat("z.csv", z)
wmat("q.csv", cbind(q, keep))
wmat("M.csv", M)
