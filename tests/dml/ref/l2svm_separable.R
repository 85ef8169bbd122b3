source("ref/_common.R")
# Optimum of the same problem by active-set Newton (svm_opt in _common.R).
n <- 40; i <- 1:n
X <- cbind(3 * sin(0.7 * i), 2 * cos(1.3 * i), sin(0.3 * i) * cos(0.5 * i))
score <- X[, 1] - 0.8 * X[, 2] + 0.5 * X[, 3] + 0.3
y <- ifelse(score > 0, 1, -1)
w <- svm_opt(X, y, 1)
slack <- 1 - y * as.vector(X %*% w)
pred <- sign(as.vector(X %*% w))
wmat("model.csv", w)
wscalar("obj.scalar", svm_obj(X, y, w, 1))
wscalar("small_grad.scalar", TRUE)
wscalar("nsv.scalar", sum(slack > 0))
wmat("pred.csv", pred)
wscalar("acc.scalar", sum(pred == y) / n)
