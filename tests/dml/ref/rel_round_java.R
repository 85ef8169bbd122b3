# rel_round_java: Java's Math.round (SystemDS's round): floor, plus one when
# the remainder is at least 0.5; NaN 0; saturating at +-2^63 (printed as
# Java prints the double 2^63).
source("ref/_common.R")
jround <- function(x) {
  r <- floor(x)
  up <- !is.na(x) & is.finite(x) & (x - r >= 0.5)
  r[up] <- r[up] + 1
  r[is.nan(x)] <- 0
  r[r >= 2^63] <- 2^63
  r[r <= -2^63] <- -2^63
  r
}
wlines("stdout.txt", c("-2.0 3.0 0.0 0.0 0.0",
                       "9.223372036854776E18 -9.223372036854776E18 9.223372036854776E18"))
X <- matrix(c(NaN, 2.5, -0.4, 0.49999999999999994), 2, 2, byrow = TRUE)
wmat("R.csv", jround(X))
Y <- matrix((1:2000) %% 97, 50, 40, byrow = TRUE) / 9.7 - 5
Y[3, 7] <- NaN
wscalar("s.scalar", sum(jround(Y) * 2 + 1))
