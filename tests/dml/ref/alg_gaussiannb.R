# expected/ and refdata/ come from scikit-learn: ref/alg_gaussiannb.py
source("ref/_python.R")
