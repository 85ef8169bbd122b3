# expected/ and refdata/ come from NumPy: ref/alg_quantizebycluster.py
source("ref/_python.R")
