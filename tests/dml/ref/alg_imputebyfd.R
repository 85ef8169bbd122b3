# expected/ and refdata/ come from NumPy: ref/alg_imputebyfd.py
source("ref/_python.R")
