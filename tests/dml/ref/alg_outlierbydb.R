# expected/ comes from SystemDS's DBSCAN rule in plain Python: ref/alg_outlierbydb.py
source("ref/_python.R")
