# expected/ come from a plain-Python driver of SystemDS's transformdecode /
# transformcolmap rules: ref/frame_transform_meta_nd.py
source("ref/_python.R")
