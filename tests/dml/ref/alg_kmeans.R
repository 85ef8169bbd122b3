# expected/ and refdata/ come from scikit-learn: ref/alg_kmeans.py
source("ref/_python.R")
