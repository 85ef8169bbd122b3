# expected/ and refdata/ come from plain Python: ref/alg_hospitalresidency.py
source("ref/_python.R")
