source("ref/_common.R")
source("ref/_refdata.R")
# proposer-optimal Gale-Shapley; R: rankings of proposers, S: acceptor scores
gs <- function(R, S) {
  n <- nrow(R); ptr <- rep(1, n); partner <- rep(0, n); free <- 1:n
  while (length(free) > 0) {
    p <- free[1]; a <- R[p, ptr[p]]; ptr[p] <- ptr[p] + 1
    if (partner[a] == 0) { partner[a] <- p; free <- free[-1] }
    else if (S[a, p] > S[a, partner[a]]) { free[1] <- partner[a]; partner[a] <- p }
  }
  M <- matrix(0, n, n); for (a in 1:n) M[a, partner[a]] <- S[a, partner[a]]; M
}
ranked <- function(P, A) {
  n <- nrow(P); S <- t(apply(A, 1, function(r) { s <- numeric(n); s[r] <- n:1; s }))
  gs(P, S)
}
wmat("doc.csv", ranked(matrix(c(2, 1, 3, 1, 2, 3, 1, 3, 2), 3, byrow = TRUE),
                       matrix(c(3, 1, 2, 2, 1, 3, 3, 2, 1), 3, byrow = TRUE)))
set.seed(9); n <- 8
P <- t(replicate(n, sample(n))); A <- t(replicate(n, sample(n)))
wref("P", P); wref("A", A)
wmat("ranked.csv", ranked(P, A))
Pv <- matrix(round(runif(n * n) * 100), n); Av <- t(replicate(n, sample(100, n)))
wref("Pv", Pv); wref("Av", Av)
R <- t(apply(Pv, 1, function(r) order(-r, seq_along(r))))
wmat("valued.csv", gs(R, Av))
