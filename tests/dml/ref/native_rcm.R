# expected/ comes from Python (labels numbered by hand): ref/native_rcm.py
source("ref/_python.R")
