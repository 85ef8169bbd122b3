# expected/ and refdata/ come from scikit-learn: ref/alg_gmm.py
source("ref/_python.R")
