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
wmat("s1.csv", st(x1)); wmat("s2.csv", st(x2)); wmat("s3.csv", st(x3))
# x1's report with one bin, in SystemDS's format: numbers as Java prints a
# double, its printf lines, and its overview lines with count and size
# swapped (SystemDS's script prints them so)
s <- st(x1)
g <- rle(is.na(x1)); g <- g$lengths[g$values]
tb <- table(factor(g, levels = 1:max(g)))
sep <- "-------------------------"
ov <- character(0)
for (i in 1:max(g)) if (tb[i] > 0) ov <- c(ov, sprintf(" %.0f NA in a row: %d times", tb[[i]], i))
wlines("stdout.txt", c(sep, "Length of time series:", jstr(11), sep, "Number of Missing Values:", jstr(7),
  sep, "Percentage of Missing Values:", sprintf("%3.2f %%", 7 / 11), sep, "Number of Gaps:", jstr(4),
  sep, "Average Gap Size:", sprintf("%3.2f %%", s[5]), sep,
  "Longest NA gap (series of consecutive NAs)", jstr(s[6]), sep,
  "Most frequent gap size (series of consecutive NA series)", jstr(s[7]), sep,
  "Gap size accounting for most NAs", jstr(s[8]), sep, "Stats for Bins",
  sprintf("  Bin %d (%2.0f values from %2.0f to %2.0f):%5.0f NAs (%3.2f %%)", 1, 11, 1, 11, 7, 7 / 11),
  sep, "Overview NA Series", ov, sep))
source("ref/_refdata.R")
wref("x2", matrix(ifelse(is.na(x2), 0, x2), ncol = 1))
