source("ref/_common.R")
# SystemDS's differenceStatistics report: each measure's mean (Java's
# Double.toString) and its quantiles at P (DML's quantile: the
# ceil(p N)-th smallest, R's type 1), printed as toString does (3
# decimals, half-even on the binary value as C's printf; NaN and
# infinities as Java prints them; every row ends with the line
# separator, here " ").
P <- c(0, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 1)
dec3 <- function(v) sapply(v, function(x) {
  if (is.nan(x)) "NaN" else if (is.infinite(x)) (if (x > 0) "Infinity" else "-Infinity")
  else sprintf("%.3f", x)
})
row3 <- function(v) paste0(paste(dec3(v), collapse = " "), " ")
quant <- function(E) {
  e <- as.vector(t(E))
  if (all(is.nan(e))) return(rep(NaN, length(P)))
  quantile(e, P, type = 1, names = FALSE)
}
measure <- function(label, qlabel, E) {
  c(paste0(label, ": ", jstr(kmean(E))), paste0(qlabel, ": ", row3(quant(E))))
}
# DML's mean: a Kahan sum (SystemDS's kahan-plus: the correction is added
# to each addend) over the cells in row order, over N; with an infinite
# or NaN cell the plain IEEE sum
kmean <- function(E) {
  e <- as.vector(t(E))
  if (any(!is.finite(e))) return(sum(e) / length(e))
  s <- 0; cr <- 0
  for (x in e) {
    y <- cr + x; t <- s + y
    cr <- y - (t - s); s <- t
  }
  s / length(E)
}
skew <- function(X) kmean(((X - kmean(X)) / sd(as.vector(X)))^3)
stats <- function(X, Y) {
  AE <- abs(X - Y); SE <- (X - Y)^2
  mse <- kmean(SE); qse <- quant(SE)
  rng <- max(X) - min(X)
  eps <- 1e-10
  sx <- sd(as.vector(X)); sy <- sd(as.vector(Y))
  kx <- skew(X); ky <- skew(Y)
  c(paste0("quantiles are: ", paste0(dec3(P), collapse = " "), " "),
    measure("                Mean Square Error", "            Quantile Square Error", SE),
    paste0("           Root Mean Square Error: ", jstr(sqrt(mse))),
    paste0("       Quantile Root Square Error: ", row3(sqrt(qse))),
    paste0("Normalized Root Mean Square Error: ", jstr(sqrt(mse) / rng)),
    paste0("  Quantile Norm Root Square Error: ", row3(sqrt(qse) / rng)),
    measure("              Mean Absolute Error", "          Quantile Absolute Error", AE),
    measure("   Mean Absolute percentage Error", "                     Quantile APE", AE / abs(X)),
    measure("symmetric Mean Absolute per Error", "          Quantile symmetric MAPE",
            AE / ((abs(X) + abs(Y)) / 2)),
    measure("          modified symmetric MAPE", " Quantile modified symmetric MAPE",
            AE / (pmax(abs(X) + abs(Y) + eps, 0.5 + eps) / 2)),
    paste0("       Peak Signal to Noise Ratio: ", row3(10 * log10(max(X)^2 / mse))),
    paste0("  Standard Deviation Values (X,Y): (", jstr(sx), ", ", jstr(sy), ")"),
    paste0("    Standard Deviation Difference: ", jstr(abs(sy - sx))),
    paste0("                Skew Values (X,Y): (", row3(kx), ", ", row3(ky), ")"),
    paste0("                  Skew Difference: ", dec3(abs(ky - kx))),
    "")
}
X <- matrix(1:24, nrow = 6, byrow = TRUE) / 4
N <- matrix(c(0.125, 0, -0.25, 0.0625, 0, 0.375, -0.0625, 0.125, 0.5, -0.625, 0.0625, 0.125, 0.125, -0.125,
              0.125, 0.1875, 0.125, -0.1875, 0.1875, 0.25, -0.1875, 0.25, 0.25, 0.25), nrow = 6, byrow = TRUE)
Z0 <- matrix(0, 1, 3)
Z <- matrix(c(0, -1, 2, 0.5, -0.25, 4), nrow = 3, byrow = TRUE)
D <- matrix(c(0.5, 0, -0.25, 0.125, 0.25, -1), nrow = 3, byrow = TRUE)
wlines("stdout.txt", c(stats(X, X + N), stats(X * 2, X), stats(Z0, Z0), stats(Z, Z + D)))
