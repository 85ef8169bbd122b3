source("ref/_common.R")
source("ref/_refdata.R")
# Core points of DBSCAN on the training rows (at least minPts points
# within eps, itself included); a test row is an inlier (1) when some core
# point lies within eps. No distance is within 1e-9 of eps (checked).
inlier <- function(Xte, M, eps) {
  if (nrow(M) == 0) return(rep(0, nrow(Xte)))
  D <- sqrt(pmax(outer(rowSums(Xte^2), rowSums(M^2), "+") - 2 * Xte %*% t(M), 0))
  stopifnot(all(abs(D - eps) > 1e-9))
  as.numeric(apply(D, 1, min) <= eps)
}
core_points <- function(X, eps, minPts) {
  D <- as.matrix(dist(X))
  X[rowSums(D <= eps) >= minPts, , drop = FALSE]
}
X <- read_data("iris")$X
test <- seq_len(nrow(X)) %% 3 == 0
Xtr <- X[!test, ]
Xte <- rbind(X[test, ], matrix(c(0, 0, 0, 0, 8, 4, 6, 2, 5.9, 3, 4.2, 3), ncol = 4, byrow = TRUE))
M <- core_points(Xtr, 0.45, 5)
wmat("iris.csv", inlier(Xte, M, 0.45))
wscalar("iris_members.scalar", nrow(M))
P <- matrix(c(0, 0, 1, 1, 0.3, 0.3, 1.45, 1, 5, 5, 0.2, -0.4), ncol = 2, byrow = TRUE)
Mp <- matrix(c(0, 0, 1, 1), ncol = 2, byrow = TRUE)
wmat("default_eps.csv", inlier(P, Mp, 0.5))
wmat("eps15.csv", inlier(P, Mp, 1.5))
M0 <- core_points(Xtr, 0.01, 3)
wscalar("empty_model.scalar", paste(nrow(M0), nrow(Xte), 0))
