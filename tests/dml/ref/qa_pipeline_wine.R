source("ref/_common.R")
X <- as.matrix(read.csv("../data/wine_X.csv", header = FALSE)); dimnames(X) <- NULL
y <- read.csv("../data/wine_y.csv", header = FALSE)[, 1]
n <- nrow(X); m <- ncol(X); C <- max(y); k <- 5; lambda <- 0.1
mom <- function(c, p) mean((c - mean(c))^p)
stats <- t(apply(X, 2, function(c) c(mean(c), sd(c), min(c), max(c), median(c), mom(c, 3) / mom(c, 2)^1.5)))
Z <- scale(X); dimnames(Z) <- NULL; attributes(Z) <- list(dim = dim(Z))
e <- eigen(crossprod(Z) / (n - 1), symmetric = TRUE)
V <- e$vectors
for (j in 1:m) { i <- which.max(abs(V[, j])); if (V[i, j] < 0) V[, j] <- -V[, j] }
proj <- Z %*% V[, 1:2]
expl <- cumsum(e$values) / sum(e$values)
F3 <- Z %*% V[, 1:3]
prior <- as.vector(table(y)) / n
means <- t(sapply(1:C, function(c) colMeans(F3[y == c, ])))
vars <- t(sapply(1:C, function(c) apply(F3[y == c, ], 2, var)))
L <- sapply(1:C, function(c) -0.5 * rowSums(sweep(F3, 2, means[c, ])^2 / matrix(vars[c, ], n, 3, byrow = TRUE)) -
  0.5 * sum(log(vars[c, ])) + log(prior[c]))
pred <- apply(L, 1, function(r) max(which(r == max(r))))
conf <- matrix(0, C, C); for (i in 1:n) conf[y[i], pred[i]] <- conf[y[i], pred[i]] + 1
acc <- sum(diag(conf)) / n
target <- Z[, 1]; feats <- Z[, 2:m]
fold <- ((1:n * 7) %% k) + 1
cv <- matrix(0, k, 2)
for (f in 1:k) {
  te <- fold == f
  A <- cbind(feats[!te, ], 1); b <- target[!te]
  R <- diag(c(rep(lambda, m - 1), 0))
  beta <- solve(crossprod(A) + R, crossprod(A, b))
  cv[f, 1] <- sum((b - A %*% beta)^2) / nrow(A)
  cv[f, 2] <- mean((target[te] - cbind(feats[te, ], 1) %*% beta)^2)
}
wlines("stdout.txt", c(paste0("WINE n=", n, " m=", m, " classes=", C),
  paste0("PC1 explains ", jstr(dround(expl[1] * 1000) / 10), "%"),
  paste0("NB accuracy ", jstr(dround(acc * 1000) / 1000)),
  paste0("CV test MSE ", jstr(dround(mean(cv[, 2]) * 1e4) / 1e4))))
wmat("stats.csv", stats)
wmat("evals.csv", e$values)
wmat("proj.csv", proj[1:10, ])
wmat("conf.csv", conf)
wmat("cv.csv", cv)
