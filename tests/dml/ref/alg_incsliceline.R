source("ref/_common.R")
# incSliceLine by properties against sliceLine (itself checked by brute force):
# 4 lattice levels: levels 1..4 of the 4 features (maxL=0), each enumerated.
wlines("stdout.txt", c("run 1 equals sliceLine: TRUE", "run 2 equals sliceLine on the current rows: TRUE",
                       "totalX and totalE: TRUE", "offsets: TRUE", "lattice lists: 4 4 4, k kept: 3.0",
                       "statistics per lattice level: TRUE",
                       sprintf("strategy %d run 3 equals sliceLine: TRUE", 2:4),
                       "one-hot lattice: 0 meta frames, 12 columns, run 2 equals sliceLine: TRUE"))
