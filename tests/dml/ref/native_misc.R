# expected/ comes from NumPy: ref/native_misc.py
source("ref/_python.R")
