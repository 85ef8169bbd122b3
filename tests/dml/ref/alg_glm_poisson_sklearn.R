# expected/ and refdata/ come from scikit-learn: ref/alg_glm_poisson_sklearn.py
source("ref/_python.R")
