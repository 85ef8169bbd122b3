# lang_mixed_args: D*100 + M*10 + seed with (1,2,3), (1,2,4), (1,5,6);
# DML prints integers without decimals.
source("ref/_common.R")
f <- function(D, M, seed) D * 100 + M * 10 + seed
wlines("stdout.txt", paste(f(1, 2, 3), f(1, 2, 4), f(1, 5, 6)))
