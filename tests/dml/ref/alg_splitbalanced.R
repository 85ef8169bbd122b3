source("ref/_common.R")
source("ref/_refdata.R")
sb <- function(X, y, r) {
  tr <- NULL; te <- NULL
  for (c in sort(unique(y))) {
    idx <- which(y == c)
    k <- floor(length(idx) * r)
    tr <- rbind(tr, cbind(y[idx[seq_len(k)]], X[idx[seq_len(k)], , drop = FALSE]))
    rest <- idx[-seq_len(k)]
    if (length(rest) > 0) te <- rbind(te, cbind(y[rest], X[rest, , drop = FALSE]))
  }
  list(tr = tr, te = te)
}
d <- read_data("iris")
s <- sb(d$X, d$y, 0.7)
wmat("train.csv", s$tr)
wmat("test.csv", s$te)
Y2 <- c(3, 1, 2, 3, 3, 1, 2, 2, 2, 3, 1)
X2 <- matrix(1:22, 11, byrow = TRUE)
s <- sb(X2, Y2, 0.5)
wmat("train2.csv", s$tr)
wmat("test2.csv", s$te)
s <- sb(X2, Y2, 1)
wmat("train3.csv", s$tr)
wscalar("ntest3.scalar", 0)
