# expected/ and refdata/ come from SciPy: ref/alg_arima.py
source("ref/_python.R")
