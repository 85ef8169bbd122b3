# expected/ comes from Python's string methods: ref/frame_map_strings.py
source("ref/_python.R")
