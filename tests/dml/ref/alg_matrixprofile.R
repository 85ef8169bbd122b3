source("ref/_common.R")
source("ref/_refdata.R")
set.seed(3)
n <- 80
ts <- round(sin((1:n) / 3) + 0.3 * runif(n), 6)
wref("ts", ts)
mp <- function(x, w) {
  L <- length(x) - w + 1; excl <- ceiling(w / 4) + 1
  Z <- t(sapply(1:L, function(i) { v <- x[i:(i + w - 1)]; (v - mean(v)) / sqrt(mean((v - mean(v))^2)) }))
  D <- as.matrix(dist(Z))
  D[abs(outer(1:L, 1:L, "-")) < excl] <- Inf
  list(p = apply(D, 1, min), i = apply(D, 1, which.min))
}
r6 <- mp(ts, 6); r10 <- mp(ts, 10)
wmat("p6.csv", r6$p); wmat("i6.csv", r6$i)
wmat("p10.csv", r10$p); wmat("i10.csv", r10$i)
wscalar("sampled.scalar", TRUE)
