source("ref/_common.R")
# Properties only (no reference library has this ALS): recovery of an
# exactly low-rank matrix, stationarity of the regularized objectives,
# alsPredict against the factor product, the factor shapes.
for (f in c("recover_ds", "stationary_l2", "stationary_wl2",
            "stationary_cg_wl2", "predict_ok"))
  wscalar(paste0(f, ".scalar"), TRUE)
wscalar("shapes.scalar", "30x3 3x20")
