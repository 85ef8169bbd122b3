# expected/ comes from embeddings and similarities in NumPy: ref/frame_str_dedup.py
source("ref/_python.R")
