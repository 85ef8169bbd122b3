source("ref/_common.R")
source("ref/_refdata.R")
d <- read_data("wine")
o1 <- cut(d$X[, 7], 3, labels = FALSE)           # flavanoids, 3 bins
o2 <- cut(d$X[, 10], 3, labels = FALSE)          # colour intensity, 3 bins
stopifnot(all(table(o1) > 0), all(table(o2) > 0))
# SystemDS's bivar equals the textbook statistics when every categorical
# column uses all codes 1..maxDomain (here 3) and the columns its T2
# check reads by mistake (2 for nominal, 3 for ordinal) hold codes >= 1:
# the class in column 2, o1 in column 3
D <- cbind(d$X[, 1], d$y, o1, o2, d$X[, 2])
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
# pairs: (1,5) ss, (1,4) scale-ordinal, (1,2) scale-nominal, (2,5) nominal-scale,
# (2,4) nominal-ordinal, (2,2) nominal-nominal, (3,5) ordinal-scale,
# (3,4) ordinal-ordinal, (3,2) ordinal-nominal
wmat("ss.csv", matrix(ss(1, 5), ncol = 1))
wmat("sc.csv", cbind(sc(1, 4, 1, 4), sc(1, 2, 1, 2), sc(2, 5, 5, 2), sc(3, 5, 5, 3)))
wmat("cc.csv", cbind(cc(2, 4), cc(2, 2), cc(3, 4), cc(3, 2)))
wmat("oo.csv", matrix(c(3, 4, cor(D[, 3], D[, 4], method = "spearman")), ncol = 1))
wscalar("empty_groups.scalar", 3)
