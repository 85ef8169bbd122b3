source("ref/_common.R")
# hand-written stdout: Java's (long) of 1e300, -1e300, 2.75, -2.75, NaN
wlines("stdout.txt", c(
  "# FRAME: nrow = 5, ncol = 1", "# C1", "# INT64",
  "9223372036854775807", "-9223372036854775808", "2", "-2", "0", ""))
