# expected/ comes from optimal string alignment distances in Python: ref/frame_str_correcttypos.py
source("ref/_python.R")
