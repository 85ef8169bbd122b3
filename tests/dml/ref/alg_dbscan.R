# expected/ comes from SystemDS's DBSCAN rule in plain Python: ref/alg_dbscan.py
source("ref/_python.R")
