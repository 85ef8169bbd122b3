# expected/ comes from NumPy: ref/dnn_pool.py
source("ref/_python.R")
