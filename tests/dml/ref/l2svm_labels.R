source("ref/_common.R")
# All label encodings give the same -1/+1 vector, hence the same model
# (differences exactly 0); the model is the optimum of l2svm_separable.
n <- 40; i <- 1:n
X <- cbind(3 * sin(0.7 * i), 2 * cos(1.3 * i), sin(0.3 * i) * cos(0.5 * i))
score <- X[, 1] - 0.8 * X[, 2] + 0.5 * X[, 3] + 0.3
y <- ifelse(score > 0, 1, -1)
wmat("m01.csv", svm_opt(X, y, 1))
wscalar("d_pm.scalar", 0)
wscalar("d_12.scalar", 0)
wscalar("d_38.scalar", 0)
