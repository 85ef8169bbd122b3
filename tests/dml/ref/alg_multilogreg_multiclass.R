# expected/ and refdata/ come from NumPy (and scikit-learn): ref/alg_multilogreg_multiclass.py
source("ref/_python.R")
