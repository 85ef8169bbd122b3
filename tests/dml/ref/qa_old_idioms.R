source("ref/_common.R")
n <- 60; m <- 4
I <- 1:n
X <- sin(0.37 * outer(I, 1:m)) + (I %% 7) / 7
X[, 3] <- 0.5
y <- as.vector(X %*% c(1.5, -2, 0, 0.75) + cos(I) / 10)
X <- cbind(X, 1)
me <- m + 1
avg <- colSums(X) / n
v <- (colSums(X^2) - n * avg^2) / (n - 1)
unsafe <- as.numeric(v <= 0)
sc <- (1 - unsafe) / sqrt(v + unsafe)
sc[me] <- 1
sh <- -avg * sc
sh[me] <- 0
Xc <- sweep(X, 2, sc, "*") + matrix(sh, n, me, byrow = TRUE)
Xc[, me] <- 1
reg <- c(rep(0.001, m), 0)
beta <- solve(crossprod(Xc) + diag(reg), crossprod(Xc, y))
bo <- sc * beta
bo[me] <- beta[me] + sum(sh * beta)
res <- y - X %*% bo
ssr <- sum(res^2)
avgy <- mean(y)
R2 <- 1 - ssr / sum((y - avgy)^2)
r6 <- function(x) dround(x * 1e6) / 1e6
lines <- c(paste0("AVG_TOT_Y,", jstr(r6(avgy))), paste0("STDEV_RES_Y,", jstr(r6(sqrt(ssr / (n - me))))),
           paste0("R2,", jstr(r6(R2))), paste0("CONST_COLS,", jstr(sum(unsafe))),
           paste0("POS_RESIDUALS,", jstr(sum(res > 0))))
wlines("stdout.txt", lines)
wmat("beta.csv", bo)
G <- dround(abs(X[, 1]) * 3) + 1
H <- dround(abs(X[, 2]) * 2) + 1
T <- matrix(0, max(G), max(H))
for (i in 1:n) T[G[i], H[i]] <- T[G[i], H[i]] + 1
wmat("table.csv", T)
wmat("grp.csv", as.vector(tapply(y, factor(G, 1:max(G)), mean)))
wmat("ainv.csv", solve(crossprod(X[, 1:2])))
wmat("nan.csv", matrix(c(0, 1, 0, 0, 1, 0), 1))
wscalar("cm.scalar", mean((y - mean(y))^3))
wscalar("nneg.scalar", sum(res < 0))
