source("ref/_common.R")
# SystemDS's documented examples of the linearized image functions.
wmat("mirror1.csv", matrix(c(70, 80, 90, 40, 50, 60, 10, 20, 30), nrow = 1))
wmat("mirror2.csv", rbind(c(70, 80, 90, 40, 50, 60, 10, 20, 30), c(10, 20, 30, 40, 50, 60, 70, 80, 90)))
wmat("posterize.csv", matrix(c(0, 0, 0, 0, 128, 0, 0, 0, 0), nrow = 1))
wmat("pairing.csv", matrix(c(20, 30, 40, 50, 60, 70, 80, 90, 100), nrow = 1))
wlines("stdout.txt", c("linearized equal per-image builtins: TRUE",
                       "Offset out of bounds! Returning input.",
                       "crop out of bounds returns the input: TRUE"))
