source("ref/_common.R")
# Properties only (cases/dnn_lenettrain.dml): the loss falls, valid
# probabilities that classify the training set, batched = one batch,
# seeded determinism; shapes of the model (8 items, 32 filters of 1x5x5,
# 64*2*2 x 512 affine3, 2 classes) and of the 2-channel 5x6 run
# (64*1*1 inputs of affine3, 3 classes).
for (f in c("loss_decreases", "probs_valid", "accurate", "batched", "deterministic"))
  wscalar(paste0(f, ".scalar"), TRUE)
wscalar("shapes.scalar", "8 32x25 256x512 2")
wscalar("shapes2.scalar", "5x3 64 TRUE")
