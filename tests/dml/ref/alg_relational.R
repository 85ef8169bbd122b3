# expected/ and refdata/ come from plain Python loops: ref/alg_relational.py
source("ref/_python.R")
