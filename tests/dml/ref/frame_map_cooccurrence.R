# expected/ comes from a direct computation in Python: ref/frame_map_cooccurrence.py
source("ref/_python.R")
