# expected/ and refdata/ come from scikit-learn: ref/alg_msvm_wine.py
source("ref/_python.R")
