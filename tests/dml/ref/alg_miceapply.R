# expected/ and refdata/ come from NumPy: ref/alg_miceapply.py
source("ref/_python.R")
