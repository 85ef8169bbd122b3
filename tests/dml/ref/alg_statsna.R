source("ref/_common.R")
# statsNA vs run lengths of NA in R (rle), with imputeTS's definitions,
# except that ties of the two modes go to the larger gap size, as in
# SystemDS's script (its rowIndexMax takes the last maximum).
lastmax <- function(v) max(which(v == max(v)))
st <- function(x) {
  m <- is.na(x); r <- rle(m); g <- r$lengths[r$values]
  s <- c(length(x), sum(m), sum(m) / length(x), length(g), 0, 0, 0, 0)
  if (length(g) > 0) {
    tb <- table(factor(g, levels = 1:max(g)))
    s[5:8] <- c(sum(m) / length(g), max(g), lastmax(tb), lastmax(tb * (1:max(g))))
  }
  s
}
x1 <- c(1, NA, NA, 4, NA, 6, NA, NA, NA, 10, NA)
set.seed(5)
x2 <- round(rnorm(60), 3)
x2[c(3, 4, 10, 20, 21, 22, 40, 41, 55, 60)] <- NA
x3 <- c(NA, 2, NA, NA, 5)           # ties: sizes 1 and 2 once each (most frequent: 2)
x4 <- c(1, 2, 3)
wmat("s1.csv", st(x1)); wmat("s2.csv", st(x2)); wmat("s3.csv", st(x3)); wmat("s4.csv", st(x4))
s <- st(x1)
w <- ceiling(11 / 4)
binl <- character(0)
for (b in 1:4) {
  lo <- (b - 1) * w + 1; hi <- min(b * w, 11); nb <- sum(is.na(x1[lo:hi]))
  binl <- c(binl, sprintf("  bin %d (%d values from %d to %d): %d missing (%s%%)", b, hi - lo + 1, lo, hi, nb,
                          jstr(100 * nb / (hi - lo + 1))))
}
wlines("stdout.txt", c("Length of time series: 11", "Number of missing values: 7",
  paste0("Percentage of missing values: ", jstr(100 * 7 / 11), "%"), "Number of gaps: 4",
  paste0("Average gap size: ", jstr(s[5])), "Longest gap: 3", "Most frequent gap size: 1",
  "Gap size accounting for most missing values: 3", "Stats for bins:", binl,
  "Gap sizes and their frequencies:", "  1 NA in a row: 2 times", "  2 NA in a row: 1 times",
  "  3 NA in a row: 1 times"))
source("ref/_refdata.R")
wref("x2", matrix(ifelse(is.na(x2), 0, x2), ncol = 1))
