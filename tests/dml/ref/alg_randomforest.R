# randomForest properties (the case computes them): every check TRUE, no
# errors on separable blobs, 16 trees by default; the accuracy printed with
# the training labels.
source("ref/_common.R")
wscalar("errors_blobs.scalar", 0)
for (f in c("shape_prefix", "seeded", "one_tree", "votes", "votes_prefix", "regression"))
  wscalar(paste0(f, ".scalar"), TRUE)
wscalar("default_trees.scalar", 16)
wlines("stdout.txt", "Accuracy (%): 100.0")
