source("ref/_common.R")
# incSliceLine by properties against sliceLine (itself checked by brute force).
wlines("stdout.txt", c("run 1 equals sliceLine: TRUE", "run 2 equals sliceLine on the current rows: TRUE",
                       "totalX and totalE: TRUE", "offsets: TRUE", "lattice lists: 0 0 0, k kept: 3"))
