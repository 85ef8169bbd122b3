source("ref/_common.R")
wlines("stdout.txt", c(
  "X: sum=8.0 n=2",
  "noret 3.0",
  "two 5.0",
  "loop 1: sum=8.0 n=2",
  "loop 2: sum=16.0 n=2",
  "noret 8.0",
  "inner: sum=8.0 n=2",
  "s=16.0"))
