# expected/ and refdata/ come from scikit-learn: ref/alg_naivebayes_digits.py
source("ref/_python.R")
