# expected/ and refdata/ come from NumPy: ref/alg_mice.py
source("ref/_python.R")
