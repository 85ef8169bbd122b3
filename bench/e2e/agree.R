# Agreement check of the R peers (sourced by peers.R in "agree" mode, see
# bench/e2e/agree.sh): reads the inputs and braid's results that agree.dml
# wrote to a folder, runs the R peer of peers.R on the same inputs and
# prints the objective of both results and the largest difference between
# them. A peer that computes something else would make the benchmark's
# ratio meaningless.

rcsv <- function(dir, name) {
  M <- as.matrix(read.csv(file.path(dir, paste0(name, ".csv")), header = FALSE))
  dimnames(M) <- NULL
  M
}

# Prints one line comparing braid's and R's objective and results; returns
# 0 when they agree (objective within tol relative, results within rtol of
# their largest entry), else 1.
report <- function(what, fb, fr, Mb, Mr, tol = 1e-8, rtol = 1e-6) {
  df <- abs(fb - fr) / max(abs(fb), 1e-300)
  dm <- max(abs(Mb - Mr)) / max(abs(Mb), 1e-300)
  ok <- df <= tol && dm <= rtol
  cat(sprintf("%-32s objective braid %.12g  r %.12g  rel.diff %.1e;  result max diff %.1e (rel)  %s\n",
              what, fb, fr, df, dm, if (ok) "agree" else "DISAGREE"))
  if (ok) 0L else 1L
}

# Runs the check of algorithm alg on the files in dir (agree.dml's outputs
# for sparsity sp and it iterations); returns the exit status.
agree <- function(alg, dir, sp, it) {
  X <- rcsv(dir, "X")
  shape <- sprintf("%s %dx%d%s", alg, nrow(X), ncol(X), if (sp < 1) sprintf(" sp=%g", sp) else "")
  if (alg == "mlogreg") {
    if (sp < 1) X <- as(X, "CsparseMatrix")
    y <- as.vector(rcsv(dir, "y"))
    Bb <- rcsv(dir, "B")
    Br <- r_mlogreg(X, y, maxi = it)
    K <- ncol(Bb)
    Y <- outer(y, seq_len(K), "==")
    f <- function(B) {
      LT <- cbind(as.matrix(X %*% B), 0)
      mx <- apply(LT, 1, max)
      sum(mx + log(rowSums(exp(LT - mx)))) - sum(Y * LT[, 1:K]) + 0.5 * sum(B * B)
    }
    return(report(shape, f(Bb), f(Br), Bb, Br))
  }
  if (alg == "l2svm") {
    if (sp < 1) X <- as(X, "CsparseMatrix")
    y <- ifelse(as.vector(rcsv(dir, "y")) > 1, 1, -1)
    wb <- as.vector(rcsv(dir, "B"))
    wr <- r_l2svm(X, y, maxit = it)
    f <- function(w) 0.5 * sum(pmax(1 - y * as.vector(X %*% w), 0)^2) + 0.5 * sum(w * w)
    return(report(shape, f(wb), f(wr), wb, wr))
  }
  if (alg == "als") {
    X <- as(X, "CsparseMatrix")
    Ub <- rcsv(dir, "U"); Vb <- rcsv(dir, "V")
    res <- r_als_cg(X, rcsv(dir, "U0"), rcsv(dir, "V0"), maxit = it)
    ii <- X@i + 1L; jj <- rep.int(seq_len(ncol(X)), diff(X@p))
    f <- function(U, V) {
      0.5 * sum((rowSums(U[ii, ] * V[jj, ]) - X@x)^2) + 0.5 * 1e-6 * (sum(U * U) + sum(V * V))
    }
    stopifnot(abs(f(res$U, res$V) - res$loss) <= 1e-12 * res$loss)
    # the factors themselves are determined only up to the rounding that
    # CG amplifies; compare the fit at the observed entries
    fit <- function(U, V) rowSums(U[ii, ] * V[jj, ])
    return(report(shape, f(Ub, Vb), res$loss, fit(Ub, Vb), fit(res$U, res$V)))
  }
  if (alg == "autoencoder") {
    init <- list(W1 = rcsv(dir, "W1r"), W2 = rcsv(dir, "W2r"), W3 = rcsv(dir, "W3r"),
                 W4 = rcsv(dir, "W4r"), keys = as.vector(rcsv(dir, "keys")))
    res <- r_autoencoder(X, init, epochs = it)
    bb <- as.vector(rcsv(dir, "b"))
    h <- cumsum(c(0, sapply(res$b, length)))
    Wb <- list(rcsv(dir, "W1"), rcsv(dir, "W2"), rcsv(dir, "W3"), rcsv(dir, "W4"))
    bb <- lapply(1:4, function(l) bb[(h[l] + 1):h[l + 1]])
    # 1/2 squared reconstruction error of the standardized rows
    f <- function(W, b) {
      A <- res$Z
      for (l in 1:4) A <- tanh(tcrossprod(A, W[[l]]) + rep(b[[l]], each = nrow(A)))
      0.5 * sum((A - res$Z)^2)
    }
    return(report(shape, f(Wb, bb), f(res$W, res$b), rcsv(dir, "H"), res$H))
  }
  stop("no agreement check for ", alg)
}
