# R peers of the braid benchmark scripts (bench/e2e/*.dml).
#
# Usage: Rscript peers.R ALG n m sp it seed
#   ALG  l2svm | mlogreg | glm | kmeans | als | autoencoder | lm
#        Rscript peers.R agree ALG DIR sp it
#   (agreement check, run by bench/e2e/agree.sh: reads the inputs and the
#   results braid wrote to DIR, runs the R peer on the same inputs and
#   prints both objectives; exits with status 1 when they disagree)
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
#   mlogreg the same trust-region Newton method with Steihaug CG as
#           multiLogReg.dml (icpt=0, tol=0, maxii=5) and peers.py, 5 classes,
#           baseline category; vectorized R (dense and sparse)
#   als     the same ALS with CG half-steps as alsCG.dml (rank 20, L2 reg
#           1e-6, loss every iteration) and peers.py; residuals at the
#           observed entries only, as a dgCMatrix with X's pattern
#   autoencoder  the same 2-layer tanh autoencoder, minibatch SGD with
#           momentum, as autoencoder_2layer.dml (100, 10, batch 256, step
#           1e-3) and peers.py; dense
# Data: the same distributions as bench/e2e/data.dml (dense: standard
# normal; sparse: a fraction sp non-zero, uniform in [0, 1)), drawn by R's
# generator in this process. Prints "RESULT alg_seconds=<s> check=<v>" like
# the braid scripts; the time covers the algorithm only.

features <- function(n, m, sp) {
  if (sp >= 1) return(matrix(rnorm(n * m), n, m))
  suppressPackageStartupMessages(library(Matrix))
  rsparsematrix(n, m, density = sp, rand.x = runif)
}

# Linear scores X W + noise, k columns, centered (data.dml's scores).
scores <- function(X, k = 1) {
  W <- matrix(rnorm(ncol(X) * k), ncol(X), k)
  S <- as.matrix(X %*% W) + 0.5 * matrix(rnorm(nrow(X) * k), nrow(X), k)
  S <- sweep(S, 2, colMeans(S))
  if (k == 1) as.vector(S) else S
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


# tau >= 0 with ||S + tau V|| = delta (S inside the trust region).
to_boundary <- function(S, V, delta) {
  sv <- sum(S * V); vv <- sum(V * V); ss <- sum(S * S)
  if (vv <= 0) return(0)
  disc <- sqrt(max(sv * sv + vv * (delta * delta - ss), 0))
  tau <- if (sv >= 0) (delta * delta - ss) / (sv + disc) else (disc - sv) / vv
  max(tau, 0)
}

# Multinomial logistic regression, baseline category k = max(y), no
# intercept, L2 penalty reg/2 |B|^2, by trust-region Newton with Steihaug
# CG (multiLogReg.dml with icpt=0, tol=0): maxi outer, at most maxii CG
# steps. X dense or dgCMatrix; y integer labels 1..k. Returns the m x (k-1)
# weights.
r_mlogreg <- function(X, y, reg = 1, maxi = 5, maxii = 5) {
  n <- nrow(X); D <- ncol(X); K <- max(y) - 1
  Y <- matrix(0, n, K)
  obs <- which(y <= K)
  Y[cbind(obs, y[obs])] <- 1
  objective <- function(B) {
    LT <- as.matrix(X %*% B)
    mx <- pmax(LT[cbind(seq_len(n), max.col(LT, ties.method = "first"))], 0)
    E <- exp(LT - mx)
    S <- rowSums(E) + exp(-mx)
    list(f = sum(mx + log(S)) - sum(Y * LT) + 0.5 * reg * sum(B * B), P = E / S)
  }
  gradient <- function(B, P) as.matrix(crossprod(X, P - Y)) + reg * B
  B <- matrix(0, D, K)
  o <- objective(B); f <- o$f; P <- o$P
  G <- gradient(B, P)
  gnorm0 <- gnorm <- sqrt(sum(G * G))
  delta <- 1e150
  for (it in seq_len(maxi)) {
    forcing <- min(0.1, sqrt(gnorm / gnorm0))
    S <- matrix(0, D, K); R <- -G; V <- R
    rr <- sum(R * R)
    boundary <- FALSE
    for (cg in seq_len(maxii)) {
      Q <- P * as.matrix(X %*% V)
      HV <- as.matrix(crossprod(X, Q - P * rowSums(Q))) + reg * V
      vhv <- sum(V * HV)
      alpha <- if (vhv > 0) rr / vhv else 0
      Snew <- S + alpha * V
      if (vhv <= 0 || sum(Snew * Snew) >= delta * delta) {
        tau <- to_boundary(S, V, delta)
        S <- S + tau * V; R <- R - tau * HV
        boundary <- TRUE
        break
      }
      S <- Snew
      R <- R - alpha * HV
      rrn <- sum(R * R)
      V <- R + (rrn / rr) * V
      done <- sqrt(rrn) <= forcing * gnorm
      rr <- rrn
      if (done) break
    }
    Bn <- B + S
    on <- objective(Bn)
    pred <- -0.5 * (sum(S * G) - sum(S * R))
    rho <- if (pred > 0) (f - on$f) / pred else -1
    snorm <- sqrt(sum(S * S))
    if (it == 1) delta <- min(delta, snorm)
    if (rho < 0.25) delta <- 0.25 * snorm
    else if (rho > 0.75 && boundary) delta <- 2 * delta
    Gn <- gradient(Bn, on$P)
    if (rho > 1e-4) {
      B <- Bn; f <- on$f; P <- on$P; G <- Gn; gnorm <- sqrt(sum(Gn * Gn))
    }
  }
  B
}

# Low-rank factorization X ~ U t(V) of a dgCMatrix by ALS with CG
# half-steps (alsCG.dml, regType L2, check=TRUE, thr=0): maxit full
# iterations from U, V (n x r, m x r), each half-step at most r CG steps;
# the fit and the residuals are computed at the observed (non-zero)
# entries of X only. Returns list(U, V, loss).
r_als_cg <- function(X, U, V, reg = 1e-6, maxit = 5) {
  X <- as(X, "CsparseMatrix")
  r <- ncol(U)
  ii <- X@i + 1L
  jj <- rep.int(seq_len(ncol(X)), diff(X@p))
  # the entries of A t(B) at X's non-zeros, as a dgCMatrix with X's pattern
  masked <- function(A, B, minus = 0) {
    M <- X
    M@x <- rowSums(A[ii, , drop = FALSE] * B[jj, , drop = FALSE]) - minus
    M
  }
  loss <- function() {
    0.5 * sum((rowSums(U[ii, , drop = FALSE] * V[jj, , drop = FALSE]) - X@x)^2) +
      0.5 * reg * (sum(U * U) + sum(V * V))
  }
  cur <- loss()
  for (it in seq_len(maxit)) {
    # U-step with V fixed
    R <- -(as.matrix(masked(U, V, X@x) %*% V) + reg * U)
    P <- R; rr0 <- rr <- sum(R * R); k <- 0
    while (k < r && rr > 1e-18 * rr0) {
      k <- k + 1
      HP <- as.matrix(masked(P, V) %*% V) + reg * P
      alpha <- rr / sum(P * HP)
      U <- U + alpha * P
      R <- R - alpha * HP
      rrn <- sum(R * R)
      P <- R + (rrn / rr) * P
      rr <- rrn
    }
    # V-step with U fixed
    R <- -(as.matrix(crossprod(masked(U, V, X@x), U)) + reg * V)
    P <- R; rr0 <- rr <- sum(R * R); k <- 0
    while (k < r && rr > 1e-18 * rr0) {
      k <- k + 1
      HP <- as.matrix(crossprod(masked(U, P), U)) + reg * P
      alpha <- rr / sum(P * HP)
      V <- V + alpha * P
      R <- R - alpha * HP
      rrn <- sum(R * R)
      P <- R + (rrn / rr) * P
      rr <- rrn
    }
    cur <- loss()
  }
  list(U = U, V = V, loss = cur)
}

# Two-layer tanh autoencoder (m -> h1 -> h2 -> h1 -> m) by minibatch SGD
# with momentum (autoencoder_2layer.dml): rows shuffled by order(keys),
# columns standardized, weights sqrt(6 / (fan-in + fan-out)) times the
# given W1..W4 (uniform in [-1, 1]), biases 0; step decays per epoch.
# Returns list(W, b) of the four layers and H, the h2-unit code of every
# row in the original order.
r_autoencoder <- function(X, init, epochs = 1, batch = 256, step = 1e-3, decay = 0.95,
                          mu = 0.9) {
  n <- nrow(X); m <- ncol(X)
  perm <- order(init$keys)
  Xp <- X[perm, , drop = FALSE]
  sds <- apply(Xp, 2, sd)
  Z <- scale(Xp, center = TRUE, scale = sds + (sds <= 0))
  W1 <- sqrt(6 / sum(dim(init$W1))) * init$W1; W2 <- sqrt(6 / sum(dim(init$W2))) * init$W2
  W3 <- sqrt(6 / sum(dim(init$W3))) * init$W3; W4 <- sqrt(6 / sum(dim(init$W4))) * init$W4
  b1 <- numeric(nrow(W1)); b2 <- numeric(nrow(W2)); b3 <- numeric(nrow(W3)); b4 <- numeric(m)
  uW1 <- 0 * W1; uW2 <- 0 * W2; uW3 <- 0 * W3; uW4 <- 0 * W4
  ub1 <- b1; ub2 <- b2; ub3 <- b3; ub4 <- b4
  per_epoch <- ceiling(n / batch)
  beg <- 1
  for (iter in seq_len(epochs * per_epoch)) {
    end <- min(beg + batch - 1, n)
    Xb <- Z[beg:end, , drop = FALSE]
    nb <- nrow(Xb)
    A1 <- tanh(tcrossprod(Xb, W1) + rep(b1, each = nb))
    A2 <- tanh(tcrossprod(A1, W2) + rep(b2, each = nb))
    A3 <- tanh(tcrossprod(A2, W3) + rep(b3, each = nb))
    Yh <- tanh(tcrossprod(A3, W4) + rep(b4, each = nb))
    d4 <- (Yh - Xb) * (1 - Yh^2)
    d3 <- (d4 %*% W4) * (1 - A3^2)
    d2 <- (d3 %*% W3) * (1 - A2^2)
    d1 <- (d2 %*% W2) * (1 - A1^2)
    lr <- step / nb
    uW4 <- mu * uW4 - lr * crossprod(d4, A3); ub4 <- mu * ub4 - lr * colSums(d4)
    uW3 <- mu * uW3 - lr * crossprod(d3, A2); ub3 <- mu * ub3 - lr * colSums(d3)
    uW2 <- mu * uW2 - lr * crossprod(d2, A1); ub2 <- mu * ub2 - lr * colSums(d2)
    uW1 <- mu * uW1 - lr * crossprod(d1, Xb); ub1 <- mu * ub1 - lr * colSums(d1)
    W1 <- W1 + uW1; W2 <- W2 + uW2; W3 <- W3 + uW3; W4 <- W4 + uW4
    b1 <- b1 + ub1; b2 <- b2 + ub2; b3 <- b3 + ub3; b4 <- b4 + ub4
    beg <- if (end == n) 1 else end + 1
    if (iter %% per_epoch == 0) step <- step * decay
  }
  H <- tanh(tcrossprod(tanh(tcrossprod(Z, W1) + rep(b1, each = n)), W2) + rep(b2, each = n))
  H[perm, ] <- H
  list(W = list(W1, W2, W3, W4), b = list(b1, b2, b3, b4), H = H, Z = Z)
}

args <- commandArgs(trailingOnly = TRUE)
if (length(args) == 5 && args[1] == "agree") {
  suppressPackageStartupMessages(library(Matrix))
  source(file.path(dirname(sub("^--file=", "", grep("^--file=", commandArgs(), value = TRUE))),
                   "agree.R"))
  quit(status = agree(args[2], args[3], as.numeric(args[4]), as.integer(args[5])))
}
if (length(args) != 6) stop("usage: peers.R ALG n m sp it seed")
alg <- args[1]
n <- as.integer(args[2]); m <- as.integer(args[3])
sp <- as.numeric(args[4]); it <- as.integer(args[5]); seed <- as.integer(args[6])
set.seed(seed)

if (alg == "als") {
  # ratings 1..5 at a fraction sp of the entries (als.dml); initial
  # factors uniform in [-0.5, 0.5]
  suppressPackageStartupMessages(library(Matrix))
  X <- rsparsematrix(n, m, density = sp, rand.x = function(k) ceiling(5 * runif(k)))
  U0 <- matrix(runif(n * 20, -0.5, 0.5), n, 20)
  V0 <- matrix(runif(m * 20, -0.5, 0.5), m, 20)
} else if (alg == "autoencoder") {
  X <- as.matrix(features(n, m, sp))
  init <- list(W1 = matrix(runif(100 * m, -1, 1), 100, m), W2 = matrix(runif(10 * 100, -1, 1), 10, 100),
               W3 = matrix(runif(100 * 10, -1, 1), 100, 10), W4 = matrix(runif(m * 100, -1, 1), m, 100),
               keys = runif(n))
} else {
  X <- features(n, m, sp)
  y <- scores(X, if (alg == "mlogreg") 5 else 1)
}
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
} else if (alg == "mlogreg") {
  out <- r_mlogreg(X, max.col(y, ties.method = "last"), maxi = it)
} else if (alg == "als") {
  out <- r_als_cg(X, U0, V0, maxit = it)$U
} else if (alg == "autoencoder") {
  out <- r_autoencoder(X, init, epochs = it)$H
} else stop("no R peer for ", alg)
t1 <- proc.time()[["elapsed"]]
cat(sprintf("RESULT alg_seconds=%.6f check=%.17g\n", t1 - t0, sum(out^2)))
