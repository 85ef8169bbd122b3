# expected/ come from NumPy: ref/quantize_local.py
source("ref/_python.R")
