# expected/ and refdata/ come from NumPy: ref/alg_shapexplainer.py
source("ref/_python.R")
