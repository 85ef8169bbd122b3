source("ref/_common.R")
# Properties only: non-negative factors, monotone objectives, an overall
# decrease, the factor shapes.
for (f in c("nonneg", "monotone_gnmf", "monotone_pnmf", "decrease"))
  wscalar(paste0(f, ".scalar"), TRUE)
wscalar("shapes.scalar", "400x8 8x64")
