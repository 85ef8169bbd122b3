# Helpers shared by the reference scripts of tests/dml (not a case itself).
#
# ref/<case>.R runs from tests/dml as `Rscript ref/<case>.R` and writes the
# expected outputs of cases/<case>.dml into expected/<case>/. The case name
# comes from the script's file name.

local({
  a <- commandArgs(trailingOnly = FALSE)
  f <- sub("^--file=", "", a[grep("^--file=", a)][1])
  CASE <<- sub("\\.R$", "", basename(f))
})
EXP_DIR <- file.path("expected", CASE)
unlink(EXP_DIR, recursive = TRUE)
dir.create(EXP_DIR, recursive = TRUE, showWarnings = FALSE)

# Numbers at full precision (%.17g reads back as the same double).
num_str <- function(x) {
  x <- as.numeric(x)
  if (any(is.na(x) & !is.nan(x))) stop("NA in expected output of ", CASE)
  s <- sprintf("%.17g", x)
  s[is.nan(x)] <- "NaN"
  s[is.infinite(x) & x > 0] <- "Inf"
  s[is.infinite(x) & x < 0] <- "-Inf"
  s
}

# Matrix (a vector is taken as a column) as comma-separated values.
wmat <- function(file, X) {
  if (is.null(dim(X))) X <- matrix(X, ncol = 1)
  X <- as.matrix(X)
  lines <- if (nrow(X) == 0) character(0) else
    apply(X, 1, function(r) paste(num_str(r), collapse = ","))
  writeLines(lines, file.path(EXP_DIR, file))
}

# Scalar: logical as TRUE/FALSE, strings as they are, numbers at full precision.
wscalar <- function(file, v) {
  stopifnot(length(v) == 1)
  s <- if (is.logical(v)) (if (v) "TRUE" else "FALSE")
       else if (is.character(v)) v
       else num_str(v)
  writeLines(s, file.path(EXP_DIR, file))
}

# Literal lines (stdout.txt, error.txt).
wlines <- function(file, lines) writeLines(lines, file.path(EXP_DIR, file))

# DML's round: halves go up (Java's Math.round), unlike R's round.
dround <- function(x) floor(x + 0.5)

# DML's seq(from, to) as a column vector.
dseq <- function(from, to) matrix(seq(from, to), ncol = 1)

# Java's Double.toString, the form in which DML prints doubles and joins
# them into strings: shortest round-trip digits, always with a fraction,
# plain for 1e-3 <= |x| < 1e7, else d.dddE<exp>.
jstr <- function(x) {
  if (is.nan(x)) return("NaN")
  if (is.infinite(x)) return(if (x > 0) "Infinity" else "-Infinity")
  if (x == 0) return(if (1 / x < 0) "-0.0" else "0.0")
  for (d in 1:17) {
    s <- sprintf("%.*e", d - 1, x)
    if (as.numeric(s) == x) break
  }
  mant <- sub("e.*$", "", sub("^-", "", s))
  ex <- as.integer(sub("^.*e", "", s))
  digits <- sub("0+$", "", gsub("\\.", "", mant))
  if (digits == "") digits <- "0"
  nd <- nchar(digits)
  if (abs(x) >= 1e-3 && abs(x) < 1e7) {
    if (ex >= 0) {
      ip <- if (nd <= ex + 1) paste0(digits, strrep("0", ex + 1 - nd)) else substr(digits, 1, ex + 1)
      fp <- if (nd <= ex + 1) "0" else substr(digits, ex + 2, nd)
    } else {
      ip <- "0"
      fp <- paste0(strrep("0", -ex - 1), digits)
    }
    out <- paste0(ip, ".", fp)
  } else {
    out <- paste0(substr(digits, 1, 1), ".", if (nd > 1) substr(digits, 2, nd) else "0", "E", ex)
  }
  if (x < 0) paste0("-", out) else out
}

# ---- references for the algorithm builtins (independent of the DML) ----

# Squared-hinge L2-SVM optimum: minimizes reg/2 |w|^2 + 1/2 sum max(0, 1 - y Xw)^2
# for y in {-1, +1} by the generalized Newton (active set) method: solve the
# least-squares problem of the examples with positive slack until that set
# no longer changes. Checks the optimality (gradient) before returning.
svm_opt <- function(X, y, reg) {
  w <- rep(0, ncol(X))
  prev <- NULL
  for (k in 1:200) {
    act <- as.vector(1 - y * (X %*% w) > 0)
    if (!is.null(prev) && all(act == prev)) break
    Xa <- X[act, , drop = FALSE]
    w <- as.vector(solve(reg * diag(ncol(X)) + crossprod(Xa), crossprod(Xa, y[act])))
    prev <- act
  }
  h <- pmax(0, 1 - y * as.vector(X %*% w))
  g <- reg * w - as.vector(crossprod(X, h * y))
  if (sqrt(sum(g^2)) > 1e-10) stop("svm_opt did not converge in ", CASE)
  slack <- 1 - y * as.vector(X %*% w)
  if (min(abs(slack)) < 1e-3) stop("an example sits on the margin in ", CASE, ": the case is fragile")
  w
}
svm_obj <- function(X, y, w, reg) {
  h <- pmax(0, 1 - y * as.vector(X %*% w))
  0.5 * sum(h^2) + 0.5 * reg * sum(w^2)
}

# Ridge regression by QR of the augmented least-squares problem
#   min |y - X b|^2 + sum(pen * b^2)
# (pen: one penalty per column of X; 0 leaves a coefficient unpenalized).
ridge_qr <- function(X, y, pen) {
  A <- rbind(X, diag(sqrt(pen), ncol(X)))
  as.vector(qr.coef(qr(A), c(y, rep(0, ncol(X)))))
}

# SystemDS lm semantics: icpt 0 (no intercept), 1 (intercept, last entry),
# 2 (intercept, columns standardized to mean 0 / sd 1 (n-1) while fitting,
# returned for the original columns); the intercept is never penalized and
# constant columns get weight 0 under icpt 1 and 2.
lm_ref <- function(X, y, icpt, reg) {
  m <- ncol(X)
  if (icpt == 0) return(ridge_qr(X, y, rep(reg, m)))
  mu <- colMeans(X)
  sdv <- apply(X, 2, sd)
  keep <- sdv > 0
  sc <- if (icpt == 2) ifelse(keep, 1 / sdv, 0) else as.numeric(keep)
  Z <- cbind(sweep(X[, keep, drop = FALSE], 2, mu[keep]) %*% diag(sc[keep], sum(keep)), 1)
  th <- ridge_qr(Z, y, c(rep(reg, sum(keep)), 0))
  b <- rep(0, m)
  b[keep] <- th[seq_len(sum(keep))] * sc[keep]
  b0 <- th[sum(keep) + 1] - sum(mu[keep] * b[keep])
  c(b, b0)
}
