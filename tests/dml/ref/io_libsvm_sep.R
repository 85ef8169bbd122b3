# io_libsvm_sep: the round trips are exact; the .mtd of the file written
# with indSep ";" stores it, so a read with indSep ":" contradicts it.
source("ref/_common.R")
wlines("stdout.txt", c("round trips: TRUE TRUE 4x5", "from the .mtd: TRUE"))
wlines("error.txt", c("nonzero", "e.svm: indSep=\":\" disagrees with", "which says indSep \";\""))
