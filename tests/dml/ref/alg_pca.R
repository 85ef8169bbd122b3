# expected/ and refdata/ come from scikit-learn: ref/alg_pca.py
source("ref/_python.R")
