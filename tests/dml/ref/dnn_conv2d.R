# expected/ comes from NumPy: ref/dnn_conv2d.py
source("ref/_python.R")
