# adasyn by properties of SystemDS's algorithm (the case computes them from
# the inputs in refdata/, drawn once with NumPy by ref/alg_adasyn.py, which
# this script keeps): every check TRUE; adasyn prints the class imbalance
# (minority share: 8 of 30 rows, then 6 of 30 with three classes, 8 of 30
# again and 15 of 30 with empty_ok).
source("ref/_common.R")
for (f in c("ok", "repeat_ok", "beta_rows", "three_ok", "empty_ok")) wscalar(paste0(f, ".scalar"), TRUE)
wlines("stdout.txt", c(rep("adasyn: class imbalance: 0.26666666666666666", 3),
                       "adasyn: class imbalance: 0.2",
                       "adasyn: class imbalance: 0.26666666666666666",
                       "adasyn: class imbalance: 0.5"))
