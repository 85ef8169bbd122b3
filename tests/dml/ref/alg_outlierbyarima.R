# expected/ and refdata/ come from NumPy/SciPy: ref/alg_outlierbyarima.py
source("ref/_python.R")
