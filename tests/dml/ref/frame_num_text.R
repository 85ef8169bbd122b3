source("ref/_common.R")
# hand-written stdout: Java's Double.toString of the numbers put into
# string columns; DecimalFormat with exactly one fraction digit, half-even
wlines("stdout.txt", c(
  "# FRAME: nrow = 2, ncol = 2", "# C1 C2", "# STRING STRING", "80.0 a", "a 2.5", "",
  "# FRAME: nrow = 1, ncol = 3", "# C1 C2 C3", "# STRING STRING STRING", "1.2345678E7 1.0E-4 -3.0", "",
  "# FRAME: nrow = 2, ncol = 1", "# C1", "# STRING", "x", "80.0", "",
  "# FRAME: nrow = 1, ncol = 3", "# C1 C2 C3", "# FP64 FP64 FP64", "80.0 -2.2 0.1", ""))
