# expected/ comes from NumPy: ref/native_fft.py
source("ref/_python.R")
