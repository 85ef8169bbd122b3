# expected/ comes from the documented rules in Python: ref/frame_str_native.py
source("ref/_python.R")
