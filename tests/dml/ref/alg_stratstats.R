# expected/ and refdata/ come from SciPy: ref/alg_stratstats.py
source("ref/_python.R")
