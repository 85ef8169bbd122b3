# expected/ comes from scikit-learn: ref/alg_mcc.py
source("ref/_python.R")
