source("ref/_common.R")
wlines("error.txt", c("nonzero", "ffTrain", "loss_fcn must be l1, l2, log_loss, logcosh_loss or cel"))
