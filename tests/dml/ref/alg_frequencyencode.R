# expected/ and refdata/ come from NumPy: ref/alg_frequencyencode.py
source("ref/_python.R")
