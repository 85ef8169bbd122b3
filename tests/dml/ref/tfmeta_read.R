# expected/ come from a plain-Python driver of SystemDS's transformmeta
# (TfMetaUtils.readTransformMetaDataFromFile): ref/tfmeta_read.py
source("ref/_python.R")
