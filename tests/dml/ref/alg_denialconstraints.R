# expected/ and refdata/ come from Python: ref/alg_denialconstraints.py
source("ref/_python.R")
