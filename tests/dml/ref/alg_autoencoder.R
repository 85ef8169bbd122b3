# expected/ and refdata/ come from NumPy: ref/alg_autoencoder.py
source("ref/_python.R")
