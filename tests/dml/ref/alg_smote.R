# expected/ and refdata/ come from Python: ref/alg_smote.py
source("ref/_python.R")
