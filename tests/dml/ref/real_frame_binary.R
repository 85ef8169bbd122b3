source("ref/_common.R")
# the frame of the case: strings (one missing), doubles (one NaN), integers,
# booleans, named s, x, k, flag; toString prints doubles with 3 decimals
s <- c("a", "null", "c,d", "e")
x <- c(1.5, NaN, 0, 1e5)
k <- c(3, 4, 5, -6)
flag <- c(TRUE, FALSE, TRUE, TRUE)
fx <- ifelse(is.nan(x), "NaN", sprintf("%.3f", x))
fb <- ifelse(flag, "TRUE", "FALSE")
hdr <- function(n, names, types) c(sprintf("# FRAME: nrow = %d, ncol = %d", n, length(names)),
                                   paste("#", paste(names, collapse = " ")),
                                   paste("#", paste(types, collapse = " ")))
types <- c("STRING", "FP64", "INT64", "BOOLEAN")
names <- c("s", "x", "k", "flag")
out <- c(hdr(4, names, types), paste(s, fx, k, fb), "",
         "TRUE",
         hdr(1, paste0("C", 1:4), rep("STRING", 4)), paste(names, collapse = " "), "",
         hdr(1, names, rep("STRING", 4)), paste(types, collapse = " "), "",
         sprintf("%.1f", sum(x[!is.nan(x)]) + sum(k) + sum(flag)),
         paste("4 2", hdr(4, c("k", "flag"), c("INT64", "BOOLEAN"))[1]),
         hdr(4, c("k", "flag"), c("INT64", "BOOLEAN"))[2:3], paste(k, fb))
wlines("stdout.txt", out)
