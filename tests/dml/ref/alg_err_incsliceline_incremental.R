source("ref/_common.R")
wlines("error.txt", c("nonzero", "incSliceLine", "an incremental run (prevLattice given) needs the previous run's params, prevStats, prevFoffb, prevFoffe, oldX, oldE and metaPrevLattice (encodeLat=TRUE)"))
