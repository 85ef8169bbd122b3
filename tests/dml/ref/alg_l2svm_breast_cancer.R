# expected/ and refdata/ come from scikit-learn: ref/alg_l2svm_breast_cancer.py
source("ref/_python.R")
