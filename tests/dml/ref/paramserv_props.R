# paramserv_props checks properties (determinism, convergence to the least
# squares optimum the case computes itself with solve, seeds, empty
# partitions); the softmax classes are separable, so training is perfect.
source("ref/_common.R")
for (f in c("deterministic", "converges", "seed_matters", "empty_partitions"))
  wscalar(paste0(f, ".scalar"), TRUE)
wscalar("softmax_accuracy.scalar", 1)
