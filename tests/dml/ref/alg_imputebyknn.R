# expected/ and refdata/ come from NumPy: ref/alg_imputebyknn.py
source("ref/_python.R")
