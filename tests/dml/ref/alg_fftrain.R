source("ref/_common.R")
for (f in c("softmax_acc", "softmax_rows", "batch_free", "seeded", "sigmoid_acc", "others_run", "gradients"))
  wscalar(paste0(f, ".scalar"), TRUE)
