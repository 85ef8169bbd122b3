source("ref/_common.R")
source("ref/_refdata.R")
d <- read_data("wine")
n <- nrow(d$X)
i <- 1:n
o <- 1 + (i %% 4)
iqm <- function(x) {
  y <- sort(x); S <- length(y); k <- seq_len(S)
  sum(y * pmax(0, pmin(k, 0.75 * S) - pmax(k - 1, 0.25 * S))) / (0.5 * S)
}
scale_stats <- function(f) {
  N <- length(f); mu <- mean(f); z <- f - mu
  m2 <- mean(z^2); m3 <- mean(z^3); m4 <- mean(z^4)
  v <- var(f); sd <- sqrt(v)
  se1 <- sqrt(6 * N * (N - 1) / ((N - 2) * (N + 1) * (N + 3)))
  se2 <- sqrt(4 * (N^2 - 1) * se1^2 / ((N + 5) * (N - 3)))
  c(min(f), max(f), max(f) - min(f), mu, v, sd, sd / sqrt(N), sd / mu, m3 / sd^3, m4 / sd^4 - 3,
    se1, se2, median(f), iqm(f), 0, 0, 0)
}
cat_stats <- function(f) {
  tb <- tabulate(f, max(f))
  c(rep(0, 14), max(f), max(which(tb == max(tb))), sum(tb == max(tb)))
}
S <- cbind(sapply(1:4, function(j) scale_stats(d$X[, j])), cat_stats(d$y), cat_stats(o))
stopifnot(cat_stats(o)[17] > 1)
wmat("S.csv", S)
