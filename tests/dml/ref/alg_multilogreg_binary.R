# expected/ and refdata/ come from scikit-learn: ref/alg_multilogreg_binary.py
source("ref/_python.R")
