# expected/ comes from SystemDS's outlier rounds in plain Python: ref/alg_outlier.py
source("ref/_python.R")
