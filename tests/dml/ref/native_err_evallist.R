source("ref/_common.R")
# hand-written: the unknown-function error of evalList (runtime/builtins.c)
wlines("error.txt", c("nonzero", "evalList", "noSuchFunction"))
