source("ref/_common.R")
source("ref/_refdata.R")
d <- read_data("wine")
o1 <- cut(d$X[, 7], 4, labels = FALSE)           # flavanoids, 4 bins
o2 <- cut(d$X[, 10], 5, labels = FALSE)          # colour intensity, 5 bins
o2[o2 == 3] <- 2                                  # leave bin 3 unused
D <- cbind(d$X[, 1:2], d$y, o1, o2)
wref("D", D)
ss <- function(i, j) { a <- D[, i]; b <- D[, j]; c(i, j, cor(a, b), cov(a, b), sd(a), sd(b)) }
sc <- function(i, j, yi, ai) {
  y <- D[, yi]; a <- factor(D[, ai])
  s <- summary(aov(y ~ a))[[1]]
  bss <- s[1, 2]; wss <- s[2, 2]
  c(i, j, sqrt(bss / (bss + wss)), s[1, 4], s[1, 5], bss, wss, s[1, 1], s[2, 1], s[1, 3], s[2, 3])
}
cc <- function(i, j) {
  t <- table(D[, i], D[, j]); x <- suppressWarnings(chisq.test(t, correct = FALSE))
  c(i, j, x$statistic, x$parameter, x$p.value, sqrt(x$statistic / (sum(t) * (min(dim(t)) - 1))))
}
# pairs: (1,2) ss, (1,5) scale-ordinal, (1,3) scale-nominal, (3,2) nominal-scale,
# (3,5) nominal-ordinal, (3,3) nominal-nominal, (4,2) ordinal-scale,
# (4,5) ordinal-ordinal, (4,3) ordinal-nominal
wmat("ss.csv", matrix(ss(1, 2), ncol = 1))
wmat("sc.csv", cbind(sc(1, 5, 1, 5), sc(1, 3, 1, 3), sc(3, 2, 2, 3), sc(4, 2, 2, 4)))
wmat("cc.csv", cbind(cc(3, 5), cc(3, 3), cc(4, 5), cc(4, 3)))
wmat("oo.csv", matrix(c(4, 5, cor(D[, 4], D[, 5], method = "spearman")), ncol = 1))
wscalar("empty_groups.scalar", 3)
