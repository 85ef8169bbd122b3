source("ref/_common.R")
source("ref/_refdata.R")
# cvlm: contiguous folds of floor(n/k) rows, ridge fits by QR (lm_ref), as
# SystemDS's script: the tail rows (beyond k floor(n/k)) keep y and train
# every fold but the last;
# steplm: forward selection by AIC = n log(RSS/n) + 2 p, a column taken
# only when it lowers the AIC by more than 0.1% (SystemDS's threshold).
d <- read_data("diabetes")
X <- d$X; y <- d$y
n <- nrow(X)
cvlm_ref <- function(k, icpt, reg) {
  lim <- floor(n / k)
  pred <- y; betas <- NULL
  for (i in 1:k) {
    te <- ((i - 1) * lim + 1):(i * lim)
    tr <- if (i == k) seq_len(te[1] - 1) else setdiff(seq_len(n), te)
    b <- lm_ref(X[tr, ], y[tr], icpt, reg)
    Xt <- X[te, , drop = FALSE]
    p <- if (icpt > 0) Xt %*% b[1:ncol(X)] + b[ncol(X) + 1] else Xt %*% b
    pred[te] <- p
    betas <- rbind(betas, b)
  }
  list(pred = pred, betas = unname(betas))
}
r0 <- cvlm_ref(5, 0, 1e-7)
wmat("cv_pred0.csv", r0$pred)
wmat("cv_beta0.csv", r0$betas)
r1 <- cvlm_ref(7, 1, 0.01)
wmat("cv_pred1.csv", r1$pred)
wmat("cv_beta1.csv", r1$betas)

steplm_ref <- function(X, y, icpt, reg = 1e-7) {
  n <- nrow(X); m <- ncol(X)
  aic <- n * log((if (icpt == 1) sum((y - mean(y))^2) else sum(y^2)) / n) + 2 * icpt
  sel <- integer(0)
  B <- c(rep(0, m), if (icpt == 1) mean(y))
  repeat {
    best <- 0; bestAic <- aic
    for (j in setdiff(seq_len(m), sel)) {
      cols <- c(sel, j)
      b <- lm_ref(X[, cols, drop = FALSE], y, icpt, reg)
      f <- X[, cols, drop = FALSE] %*% b[seq_along(cols)] + (if (icpt == 1) b[length(b)] else 0)
      a <- n * log(sum((y - f)^2) / n) + 2 * (length(cols) + icpt)
      if (a < bestAic) { best <- j; bestAic <- a; bestB <- b; bestCols <- cols }
    }
    if (best == 0 || aic - bestAic <= abs(0.001 * aic)) break
    sel <- c(sel, best); aic <- bestAic
    B <- rep(0, m); B[bestCols] <- bestB[seq_along(bestCols)]
    if (icpt == 1) B <- c(B, bestB[length(bestB)])
    if (length(sel) == m) break
  }
  list(B = B, S = if (length(sel) == 0) 0 else sel)
}
s1 <- steplm_ref(X, y, 1)
wmat("step_B1.csv", s1$B)
wmat("step_S1.csv", matrix(s1$S, nrow = 1))
wscalar("step_S1_icpt.scalar", TRUE)  # the case checks the intercept entry itself
s0 <- steplm_ref(X, y - mean(y), 0)
wmat("step_B0.csv", s0$B)
wmat("step_S0.csv", matrix(s0$S, nrow = 1))
wmat("step_none.csv", matrix(steplm_ref(X[, 1:2], rep(1, n), 1)$S, nrow = 1))
