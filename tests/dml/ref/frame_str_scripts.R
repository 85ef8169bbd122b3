# expected/ comes from the documented rules in Python: ref/frame_str_scripts.py
source("ref/_python.R")
