# expected/ comes from NumPy: ref/dnn_lstm.py
source("ref/_python.R")
