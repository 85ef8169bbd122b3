source("ref/_common.R")
# Optimum by active-set Newton on [X, 1] (the bias is regularized too).
n <- 50; i <- 1:n
X <- cbind(3 * sin(0.7 * i), 2 * cos(1.3 * i), sin(0.3 * i) * cos(0.5 * i))
score <- X[, 1] - 0.8 * X[, 2] + 0.5 * X[, 3] + 0.3
lab <- as.numeric(score > 0)
lab <- abs(lab - (i %% 7 == 0))
y <- 2 * lab - 1
X1 <- cbind(X, 1)
w <- svm_opt(X1, y, 0.5)
slack <- 1 - y * as.vector(X1 %*% w)
raw <- as.vector(X1 %*% w)
wmat("model.csv", w)
wscalar("obj.scalar", svm_obj(X1, y, w, 0.5))
wscalar("nsv.scalar", sum(slack > 0))
wmat("YRaw.csv", raw)
wmat("Yidx.csv", rep(1, n))
wscalar("acc.scalar", sum(sign(raw) == y) / n)
wscalar("nrows_model.scalar", 4)
