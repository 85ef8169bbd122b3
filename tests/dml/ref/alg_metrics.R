# expected/ and refdata/ come from scikit-learn / NumPy: ref/alg_metrics.py
source("ref/_python.R")
