# expected/ and refdata/ come from NumPy: ref/alg_slicelineextract.py
source("ref/_python.R")
