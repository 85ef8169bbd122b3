# expected/ and refdata/ come from scikit-learn/SciPy: ref/alg_regmetrics.py
source("ref/_python.R")
