# expected/ and refdata/ come from scikit-learn: ref/alg_lm_diabetes.py
source("ref/_python.R")
