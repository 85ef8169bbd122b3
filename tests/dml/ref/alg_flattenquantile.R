# expected/ and refdata/ come from NumPy: ref/alg_flattenquantile.py
source("ref/_python.R")
