source("ref/_common.R")
source("ref/_refdata.R")
# Mean / median / mode of the non-missing cells of each column; masked and
# all-missing columns keep NaN; the mode is the smallest most frequent value.
d <- read_data("wine")
X <- d$X
n <- nrow(X); m <- ncol(X)
R <- matrix(seq_len(n * m), n, m, byrow = TRUE)
X[R %% 11 == 0] <- NaN
X[, m] <- NaN
Xtr <- X[1:140, ]
Xte <- X[141:n, ]
fill <- function(A, v) {
  for (j in seq_len(ncol(A))) A[is.nan(A[, j]), j] <- v[j]
  A
}
stat <- function(f) sapply(seq_len(m), function(j) {
  c <- Xtr[!is.nan(Xtr[, j]), j]
  if (j == 2 || length(c) == 0) NaN else f(c)
})
vmean <- stat(mean)
vmed <- stat(median)
# masked column (mode) and the empty column (0): checked by the case itself
wlines("mode_ok.scalar", "TRUE")
wlines("empty_ok.scalar", "TRUE")
wmat("Ymean.csv", fill(Xtr, vmean))
wmat("vmean.csv", matrix(vmean, nrow = 1))
wmat("Ymean_te.csv", fill(Xte, vmean))
wmat("Ymed.csv", fill(Xtr, vmed))
wmat("vmed.csv", matrix(vmed, nrow = 1))
wmat("Ymed_te.csv", fill(Xte, vmed))

I <- dround(2 * read_data("iris")$X)
R2 <- matrix(seq_len(length(I)), nrow(I), ncol(I), byrow = TRUE)
I[R2 %% 7 == 3] <- NaN
vmode <- apply(I, 2, function(c) {
  t <- table(c[!is.nan(c)])
  as.numeric(names(t)[which.max(t)])
})
wmat("Ymode.csv", fill(I, vmode))
wmat("vmode.csv", matrix(vmode, nrow = 1))
wmat("Ymode_te.csv", fill(I[1:10, ], vmode))
