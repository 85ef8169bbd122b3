# expected/ comes from a natural cubic spline in plain Python: ref/alg_cspline.py
source("ref/_python.R")
