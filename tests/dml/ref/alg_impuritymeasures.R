# expected/ and refdata/ come from NumPy: ref/alg_impuritymeasures.py
source("ref/_python.R")
