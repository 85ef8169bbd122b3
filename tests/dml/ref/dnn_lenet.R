# expected/ comes from NumPy: ref/dnn_lenet.py
source("ref/_python.R")
