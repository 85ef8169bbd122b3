# ampute is random: its case checks properties, every one must hold.
source("ref/_common.R")
for (nm in c("default_ok", "seed_ok", "patterns_ok", "mechanism_ok", "mcar_bounds_ok"))
  wscalar(paste0(nm, ".scalar"), TRUE)
