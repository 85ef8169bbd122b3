# expected/ and refdata/ come from NumPy: ref/alg_ppca.py
source("ref/_python.R")
