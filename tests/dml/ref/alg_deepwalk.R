source("ref/_common.R")
# deepWalk is randomized: the case checks properties (see its header).
wlines("stdout.txt", c("shape 16x4", "cliques separated: TRUE", "seeded repeat: TRUE",
                       "path: neighbour closer than the far end: TRUE",
                       "isolated vertex untouched: TRUE"))
