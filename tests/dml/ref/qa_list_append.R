source("ref/_common.R")
wlines("stdout.txt", c("3 12.0 2 3 5", paste0("2 4 ", jstr(4 * (1 + 2 + 3) + 9))))
