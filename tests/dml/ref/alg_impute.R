# expected/ come from NumPy: ref/alg_impute.py
source("ref/_python.R")
