source("ref/_common.R")
source("ref/_refdata.R")
# DBSCAN by breadth-first expansion from core points in index order; a
# border point joins the cluster of its nearest core point (lowest index
# on a tie); clusters numbered in order of their first row, noise 0.
dbscan_ref <- function(X, eps, minPts) {
  n <- nrow(X)
  D <- as.matrix(dist(X))
  N <- D <= eps
  core <- rowSums(N) >= minPts
  lab <- rep(0, n)
  cl <- 0
  for (i in seq_len(n)) {
    if (!core[i] || lab[i] != 0) next
    cl <- cl + 1
    lab[i] <- cl
    queue <- i
    while (length(queue) > 0) {
      p <- queue[1]; queue <- queue[-1]
      for (q in which(N[p, ] & core)) if (lab[q] == 0) { lab[q] <- cl; queue <- c(queue, q) }
    }
  }
  for (i in which(!core)) {
    cs <- which(N[i, ] & core)
    if (length(cs) > 0) lab[i] <- lab[cs[which.min(D[i, cs])]]
  }
  list(lab = lab, ncore = sum(core))
}
X <- read_data("iris")$X
r5 <- dbscan_ref(X, 0.45, 5)
wmat("iris5.csv", r5$lab)
wscalar("iris5_model.scalar", paste(r5$ncore, "0.45"))
wmat("iris10.csv", dbscan_ref(X, 0.45, 10)$lab)
P <- matrix(c(0, 0, 0.3, 0, 0, 0.3, 0.3, 0.3, 0.15, 0.6, 3, 3, 3.3, 3, 3, 3.3, 3.3, 3.3,
              10, 10, 3.15, 3.62), ncol = 2, byrow = TRUE)
wmat("blobs.csv", dbscan_ref(P, 0.35, 3)$lab)
wmat("allnoise.csv", dbscan_ref(P, 0.01, 2)$lab)
