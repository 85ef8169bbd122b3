# expected/ and refdata/ come from a brute-force enumeration: ref/alg_sliceline.py
source("ref/_python.R")
