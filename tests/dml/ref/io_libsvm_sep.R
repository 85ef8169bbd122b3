# io_libsvm_sep: both round trips are exact; the file written with indSep
# ";" holds "1;0.5" as its first entry, which ":" does not split.
source("ref/_common.R")
wlines("stdout.txt", "round trips: TRUE TRUE 4x5")
wlines("error.txt", c("nonzero", "e.svm: line 1: expected index:value, found \"1;0.5\""))
