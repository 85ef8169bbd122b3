# expected/ comes from a tokenizer written in Python: ref/frame_str_tokenize.py
source("ref/_python.R")
