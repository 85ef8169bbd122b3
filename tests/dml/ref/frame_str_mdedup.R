# expected/ comes from Jaccard similarities and components in Python: ref/frame_str_mdedup.py
source("ref/_python.R")
