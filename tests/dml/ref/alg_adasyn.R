# expected/ and refdata/ come from NumPy: ref/alg_adasyn.py
source("ref/_python.R")
