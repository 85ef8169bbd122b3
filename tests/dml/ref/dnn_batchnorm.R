# expected/ comes from NumPy: ref/dnn_batchnorm.py
source("ref/_python.R")
