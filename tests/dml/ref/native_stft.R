# expected/ comes from NumPy: ref/native_stft.py
source("ref/_python.R")
