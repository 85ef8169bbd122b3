source("ref/_common.R")
source("ref/_refdata.R")
set.seed(7)
n <- 60
X <- matrix(round(runif(n * 3), 6), n)
y <- ifelse(X[, 1] + 0.3 * runif(n) > 0.75, 2, 1)
wref("X", X); wref("y", y)
# SystemDS's rule: every minority row whose nearest neighbour is a majority
# row drops that neighbour (no mutual test); majority = the last most
# frequent label; ties of the nearest neighbour go to the last row.
tomek <- function(X, y) {
  D <- as.matrix(dist(X)); diag(D) <- Inf
  nn <- apply(D, 1, function(d) max(which(d == min(d))))
  tab <- table(y); maj <- as.numeric(names(tab)[length(tab) + 1 - which.max(rev(tab))])
  from <- y != maj & y[nn] == maj
  sort(unique(nn[from]))
}
d <- tomek(X, y)
stopifnot(sum(y == 1) > sum(y == 2), length(d) > 0)
wmat("under.csv", cbind(X, y)[-d, ])
wmat("drop.csv", d)
d01 <- tomek(X, 2 - y)
wmat("drop01.csv", d01)
wmat("y01.csv", (2 - y)[-d01])
# one class: nothing dropped, but removeEmpty of no rows returns one row
wscalar("none.scalar", 14)
