# R peers of the braid benchmark scripts (bench/e2e/*.dml).
#
# Usage: Rscript peers.R ALG n m sp it seed
#   ALG  l2svm | glm | kmeans | lm
#
# R as a data scientist would use it: base R and the stats package (glm.fit,
# kmeans), the Matrix package for sparse data (dgCMatrix), the BLAS R is
# linked with (Debian: OpenBLAS, threads from OPENBLAS_NUM_THREADS).
#   lm      normal equations, solve(crossprod(X) + reg I, crossprod(X, y))
#           (what lmDS does; dense and sparse)
#   glm     glm.fit(family = binomial(link = "probit")), no intercept,
#           maxit = it IRLS iterations, epsilon = double.xmin (every iteration runs);
#           dense only (glm.fit needs a dense model matrix)
#   kmeans  stats::kmeans(centers = 5, algorithm = "Lloyd", iter.max = it,
#           nstart = 1); dense only
#   l2svm   the same nonlinear CG with Newton line search as l2svm.dml and
#           peers.py, vectorized R (dense and sparse)
# Data: the same distributions as bench/e2e/data.dml (dense: standard
# normal; sparse: a fraction sp non-zero, uniform in [0, 1)), drawn by R's
# generator in this process. Prints "RESULT alg_seconds=<s> check=<v>" like
# the braid scripts; the time covers the algorithm only.

args <- commandArgs(trailingOnly = TRUE)
if (length(args) != 6) stop("usage: peers.R ALG n m sp it seed")
alg <- args[1]
n <- as.integer(args[2]); m <- as.integer(args[3])
sp <- as.numeric(args[4]); it <- as.integer(args[5]); seed <- as.integer(args[6])
set.seed(seed)

features <- function(n, m, sp) {
  if (sp >= 1) return(matrix(rnorm(n * m), n, m))
  suppressPackageStartupMessages(library(Matrix))
  rsparsematrix(n, m, density = sp, rand.x = runif)
}

# Linear scores X w + noise, centered (data.dml's scores with k = 1).
scores <- function(X) {
  w <- rnorm(ncol(X))
  s <- as.vector(X %*% w) + 0.5 * rnorm(nrow(X))
  s - mean(s)
}

# L2SVM by nonlinear conjugate gradient with Newton line search (l2svm.dml).
r_l2svm <- function(X, y, reg = 1, eps = 1e-12, maxit = 20, maxii = 20) {
  n <- nrow(X); d <- ncol(X)
  w <- numeric(d); Xw <- numeric(n)
  obj <- 0.5 * n
  r <- as.vector(crossprod(X, y)); rr <- sum(r * r)
  s <- r
  act <- rep(TRUE, n)
  since <- 0; iter <- 0
  done <- rr == 0
  while (!done && iter < maxit) {
    Xs <- as.vector(X %*% s)
    ws <- sum(w * s); ss <- sum(s * s)
    step <- 0; ii <- 0; more <- TRUE
    while (more && ii < maxii) {
      slack <- 1 - y * (Xw + step * Xs)
      on <- slack > 0
      d1 <- reg * (ws + step * ss) - sum((on * slack * y) * Xs)
      d2 <- reg * ss + sum(on * Xs * Xs)
      if (d2 > 0) {
        step <- step - d1 / d2
        more <- d1 * d1 / d2 > eps
      } else more <- FALSE
      ii <- ii + 1
    }
    w <- w + step * s
    Xw <- Xw + step * Xs
    slack <- 1 - y * Xw
    h <- pmax(slack, 0)
    objn <- 0.5 * sum(h * h) + 0.5 * reg * sum(w * w)
    rn <- as.vector(crossprod(X, h * y)) - reg * w
    rrn <- sum(rn * rn)
    iter <- iter + 1
    done <- (obj - objn <= eps * objn) || rrn == 0
    actn <- slack > 0
    since <- since + 1
    if (any(actn != act) || since >= d) {
      s <- rn; since <- 0
    } else {
      pr <- max(sum(rn * (rn - r)) / rr, 0)
      s <- rn + pr * s
      if (sum(s * rn) <= 0) { s <- rn; since <- 0 }
    }
    act <- actn; r <- rn; rr <- rrn; obj <- objn
  }
  w
}

X <- features(n, m, sp)
y <- scores(X)
t0 <- proc.time()[["elapsed"]]
if (alg == "lm") {
  A <- as.matrix(crossprod(X))
  diag(A) <- diag(A) + 1e-7
  out <- solve(A, as.vector(crossprod(X, y)))
} else if (alg == "glm") {
  if (sp < 1) stop("glm.fit needs a dense model matrix")
  fit <- suppressWarnings(glm.fit(X, as.numeric(y > 0), family = binomial(link = "probit"),
                                  intercept = FALSE,
                                  control = glm.control(epsilon = .Machine$double.xmin, maxit = it)))
  out <- fit$coefficients
} else if (alg == "kmeans") {
  if (sp < 1) stop("stats::kmeans needs a dense matrix")
  fit <- suppressWarnings(kmeans(X, centers = 5, iter.max = it, nstart = 1,
                                 algorithm = "Lloyd"))
  out <- fit$centers
} else if (alg == "l2svm") {
  out <- r_l2svm(X, ifelse(y > 0, 1, -1), maxit = it)
} else stop("no R peer for ", alg)
t1 <- proc.time()[["elapsed"]]
cat(sprintf("RESULT alg_seconds=%.6f check=%.17g\n", t1 - t0, sum(out^2)))
