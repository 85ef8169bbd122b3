source("ref/_common.R")
# the plain model does not use alpha: the same M and COV with alpha = 1;
# M has one row per feature (3)
wscalar("same.scalar", TRUE)
wscalar("rows.scalar", 3)
