# expected/ comes from a word-level Levenshtein distance in Python: ref/frame_map_wer.py
source("ref/_python.R")
