source("ref/_common.R")
wlines("error.txt", c("nonzero", "get_physical_configurations", "primitives must have the 8 columns ED, MVI, OTLR, EC, SCALE, CI, DUMMY, DIM, got 7"))
