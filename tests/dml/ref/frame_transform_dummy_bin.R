source("ref/_common.R")
source("ref/_frame.R")
h <- read_homes()
tr <- h[1:10, ]
te <- h[11:20, ]
num <- function(d, j) as.numeric(d[[j]])
enc <- function(d, ref) {
  zip <- match(d[[1]], unique(ref[[1]]))
  dis <- onehot(match(d[[2]], unique(ref[[2]])), length(unique(ref[[2]])))
  vw <- onehot(match(d[[7]], unique(ref[[7]])), length(unique(ref[[7]])))
  sq <- onehot(ewbin(num(d, 3), 4, min(num(ref, 3)), max(num(ref, 3))), 4)
  sp <- ewbin(num(d, 8), 3, min(num(ref, 8)), max(num(ref, 8)))
  X <- cbind(zip, dis, sq, num(d, 4), num(d, 5), num(d, 6), vw, sp, num(d, 9))
  X[is.na(X)] <- NaN
  X
}
X <- enc(tr, tr)
wmat("X.csv", X)
wmat("A.csv", enc(te, tr))
# widths: zip 1, district k, sqft 4, 3 pass-through, view k, saleprice 1, askingprice 1
nd <- length(unique(tr[[2]])); nv <- length(unique(tr[[7]]))
w <- c(1, nd, 4, 1, 1, 1, nv, 1, 1)
wmat("C.csv", cbind(1:9, cumsum(w) - w + 1, cumsum(w)))
# decode: bins to centres
centre <- function(x, k) { lo <- min(x); wd <- (max(x) - lo) / k; b <- ewbin(x, k); lo + (b - 1) * wd + wd / 2 }
D <- cbind(centre(num(tr, 3), 4), num(tr, 4), num(tr, 5), num(tr, 6))
wmat("D.csv", D)
dec <- list(tr[[1]], tr[[2]], centre(num(tr, 3), 4), num(tr, 4), num(tr, 5), num(tr, 6), tr[[7]],
            centre(num(tr, 8), 3), num(tr, 9))
types <- c("STRING", "STRING", "FP64", "FP64", "FP64", "FP64", "STRING", "FP64", "FP64")
wlines("stdout.txt", fstr(lapply(dec, function(x) x[1:3]), types, names(h)))
