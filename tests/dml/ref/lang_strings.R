source("ref/_common.R")
# expected stdout; doubles joined into strings as Java's Double.toString (jstr)
half <- paste0(sapply(1:3, function(k) paste0(jstr(k / 2), ";")), collapse = "")
wlines("stdout.txt", c(
  "hi ann",
  "hi bob, hi bob, hi bob",
  paste0(1:5, collapse = ""),
  half,
  "7 is odd",
  "same=TRUE differ=TRUE",
  paste0("max: ", jstr(5), ", sum: ", jstr(12), ", other: ", jstr(-1)),
  sprintf("%s has %d items costing %.2f", "cart", 3L, 9.5),
  sprintf("[%6.2f] [%-5s] [%3d]", 3.14159, "ab", 7L)))
