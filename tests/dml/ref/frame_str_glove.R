# expected/ comes from the documented cleaning in Python: ref/frame_str_glove.py
source("ref/_python.R")
