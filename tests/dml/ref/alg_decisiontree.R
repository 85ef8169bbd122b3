# expected/ and refdata/ come from scikit-learn: ref/alg_decisiontree.py
source("ref/_python.R")
