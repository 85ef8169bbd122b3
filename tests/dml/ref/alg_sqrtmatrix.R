# expected/ and refdata/ come from SciPy: ref/alg_sqrtmatrix.py
source("ref/_python.R")
