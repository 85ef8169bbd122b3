# expected/ comes from scikit-learn: ref/alg_abstain.py
source("ref/_python.R")
