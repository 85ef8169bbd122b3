# expected/ and refdata/ come from scikit-learn/NumPy: ref/alg_graph_ses.py
source("ref/_python.R")
