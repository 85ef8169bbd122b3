source("ref/_common.R")
I <- outer(1:5, 1:7, function(r, c) r * 10 + c)
# output pixel [r, q] samples the input pixel containing the inverse image
# of its centre (q - 0.5, r - 0.5) under x' = A x + t
affine <- function(I, w, h, A, tv, fill) {
  Ai <- solve(A)
  O <- matrix(fill, h, w)
  for (r in 1:h) for (q in 1:w) {
    s <- Ai %*% (c(q - 0.5, r - 0.5) - tv)
    cc <- floor(s[1]) + 1; rr <- floor(s[2]) + 1
    if (cc >= 1 && cc <= ncol(I) && rr >= 1 && rr <= nrow(I)) O[r, q] <- I[rr, cc]
  }
  O
}
rot <- function(I, th, fill) {
  ctr <- c(ncol(I), nrow(I)) / 2
  A <- matrix(c(cos(th), -sin(th), sin(th), cos(th)), 2)
  affine(I, ncol(I), nrow(I), A, ctr - A %*% ctr, fill)
}
shear <- function(I, sx, sy, fill) affine(I, ncol(I), nrow(I), matrix(c(1, sy, sx, 1), 2), c(0, 0), fill)
trans <- function(I, ox, oy, w, h, fill) {
  ox <- dround(ox); oy <- dround(oy)
  O <- matrix(fill, h, w)
  for (r in 1:h) for (q in 1:w) {
    rr <- r - oy; cc <- q - ox
    if (rr >= 1 && rr <= nrow(I) && cc >= 1 && cc <= ncol(I)) O[r, q] <- I[rr, cc]
  }
  O
}
wmat("ident.csv", I)
wmat("affine.csv", affine(I, 9, 6, matrix(c(1.6, 0.25, 0.1, 0.7), 2), c(-0.9, 0.45), -1))
wmat("singular.csv", I)
wmat("rot.csv", rot(I, 0.5, 0))
wmat("rot2.csv", rot(I, -2.2, 99))
wmat("shear_x.csv", shear(I, 0.5, 0, -1))
wmat("shear_xy.csv", shear(I, 0.3, -0.4, 0))
wmat("trans.csv", trans(I, 1.5, -1, 9, 4, 0))
wmat("trans2.csv", trans(I, -2.4, 2, 5, 8, 7))
wmat("trans_out.csv", matrix(3, 5, 7))
wlines("stdout.txt", "Inverse matrix does not exist! Returning input.")
