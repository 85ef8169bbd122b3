# expected/ comes from NumPy: ref/paramserv_bsp.py
source("ref/_python.R")
