source("ref/_common.R")
source("ref/_refdata.R")
set.seed(7)
n <- 60
X <- matrix(round(runif(n * 3), 6), n)
y <- ifelse(X[, 1] + 0.3 * runif(n) > 0.75, 2, 1)
wref("X", X); wref("y", y)
tomek <- function(X, y) {
  D <- as.matrix(dist(X)); diag(D) <- Inf
  nn <- apply(D, 1, which.min)
  tab <- table(y); maj <- as.numeric(names(tab)[which.max(tab)])
  link <- nn[nn] == seq_len(nrow(X)) & y[nn] != y
  which(link & y == maj)
}
d <- tomek(X, y)
stopifnot(sum(y == 1) > sum(y == 2), length(d) > 0)
wmat("under.csv", cbind(X, y)[-d, ])
wmat("drop.csv", d)
d01 <- tomek(X, 2 - y)
wmat("drop01.csv", d01)
wmat("y01.csv", (2 - y)[-d01])
wscalar("none.scalar", 4)
