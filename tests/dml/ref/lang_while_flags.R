source("ref/_common.R")
a <- 0; b <- 1; it <- 0
repeat {
  m <- (a + b) / 2
  if (cos(m) - m > 0) a <- m else b <- m
  it <- it + 1
  if (b - a < 1e-12 || it >= 100) break
}
X <- matrix(1:40, 10, 4, byrow = TRUE) %% 7
r <- which(rowSums(X) > 15)[1]
counts <- sapply(1:5, function(k) floor(20 / k) + 1)   # first j with j*k > 20
# state machine: 0 -> 1, stays 1 until steps > 4, -> 2, -> 3
st <- 0; steps <- 0; tr <- ""
while (st != 3) {
  steps <- steps + 1
  if (st == 0) st <- 1 else if (st == 1) { if (steps > 4) st <- 2 } else st <- 3
  tr <- paste0(tr, st)
}
wlines("stdout.txt", paste0("trace ", tr))
wscalar("root.scalar", (a + b) / 2)
wscalar("it.scalar", it)
wscalar("r.scalar", r)
wscalar("found.scalar", TRUE)
wmat("counts.csv", counts)
wscalar("steps.scalar", steps)
