# expected/ and refdata/ come from NumPy: ref/alg_ema.py
source("ref/_python.R")
