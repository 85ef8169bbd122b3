source("ref/_common.R")
# deepWalk's numbers are pinned by tests/parity (SystemDS's script); the
# case checks exact properties (see its header).
wlines("stdout.txt", c("shape 16x4", "seeded repeat: TRUE", "alpha 0 is the start: TRUE",
                       "walks change every vertex: TRUE", "weights ignored: TRUE"))
