# expected/ and refdata/ come from Python: ref/alg_discoverfd.py
source("ref/_python.R")
