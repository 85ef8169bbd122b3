# expected/ and refdata/ come from NumPy: ref/alg_xgboost.py
source("ref/_python.R")
