# expected/ and refdata/ come from NumPy/SciPy: ref/alg_tsne.py
source("ref/_python.R")
