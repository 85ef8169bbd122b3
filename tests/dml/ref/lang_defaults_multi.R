source("ref/_common.R")
summarize <- function(X, w = 1, shift = 0.5, how = "sum") {
  Xw <- if (length(w) == 1) X * w else sweep(X, 2, w, "*")
  total <- (if (how == "sum") sum(Xw) else max(Xw)) + shift
  list(total = total, cs = colSums(Xw), tag = paste0(how, ":", nrow(X), "x", ncol(X)))
}
wrap <- function(X, shift = 10) {
  r <- summarize(X, shift = shift)
  list(t2 = r$total + sum(r$cs), tag2 = r$tag)
}
X <- matrix(1:6, 2, 3, byrow = TRUE)
r1 <- summarize(X); r2 <- summarize(X, c(1, 0, 2)); r3 <- summarize(X, how = "max", shift = -1)
r4 <- summarize(t(X), w = 0.5); r5 <- wrap(X); r6 <- wrap(X, 0.5)
wlines("stdout.txt", paste(r1$tag, r2$tag, r3$tag, r4$tag, r5$tag2, r6$tag2))
wmat("tot.csv", c(r1$total, r2$total, r3$total, r4$total, r5$t2, r6$t2))
wmat("C.csv", rbind(r1$cs, r2$cs, r3$cs))
wmat("c4.csv", matrix(r4$cs, 1))
