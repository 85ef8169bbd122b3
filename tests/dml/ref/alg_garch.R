# expected/ and refdata/ come from SciPy/NumPy: ref/alg_garch.py
source("ref/_python.R")
