source("ref/_common.R")
stats <- function(X, Y) {
  D <- X - Y; A <- abs(D); mse <- mean(D^2)
  q <- quantile(as.vector(t(A)), c(0.5, 0.9, 0.99), type = 1, names = FALSE)
  c(sprintf("differenceStatistics: %d cells (%d x %d), %d differ", length(X), nrow(X), ncol(X), sum(D != 0)),
    paste0("mean squared error:       ", jstr(mse)),
    paste0("root mean squared error:  ", jstr(sqrt(mse))),
    paste0("mean absolute error:      ", jstr(mean(A))),
    paste0("max absolute error:       ", jstr(max(A))),
    paste0("relative error:           ", jstr(sqrt(sum(D^2) / sum(X^2)))),
    paste0("absolute error quantiles: ", jstr(q[1]), " / ", jstr(q[2]), " / ", jstr(q[3])))
}
X <- matrix(1:24, nrow = 6) / 4
N <- matrix(c(0.125, 0, -0.25, 0.0625, 0, 0.375, -0.0625, 0.125, 0.5, -0.625, 0.0625, 0.125, 0.125, -0.125,
              0.125, 0.1875, 0.125, -0.1875, 0.1875, 0.25, -0.1875, 0.25, 0.25, 0.25), nrow = 6, byrow = TRUE)
Z <- matrix(0, 1, 3)
wlines("stdout.txt", c(stats(X, X + N), stats(X * 2, X), stats(Z, Z)))
