# lang_sds_lexical: the values in R (f(a) = 2a): x = 3, y = f(3) since
# x > 2, z = max(f(1), f(2)), w = ceil(10 / 3) since x <= 5; DML prints
# doubles with one decimal.
source("ref/_common.R")
x <- 3; y <- if (x > 2) 2 * x else sqrt(x); z <- max(2 * 1, 2 * 2); w <- ceiling(10 / x)
wlines("stdout.txt", sprintf("x=%.1f y=%.1f z=%.1f w=%.1f", x, y, z, w))
