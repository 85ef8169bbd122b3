# expected/ comes from SystemDS's dedup in Python: ref/frame_str_dedup.py
source("ref/_python.R")
