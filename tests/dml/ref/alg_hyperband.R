source("ref/_common.R")
for (f in c("shape_range", "is_lmcg", "beats_ols", "seeded")) wscalar(paste0(f, ".scalar"), TRUE)
