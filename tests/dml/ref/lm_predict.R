source("ref/_common.R")
n <- 30; i <- 1:n
X <- cbind(2 + sin(0.7 * i), i / 10, cos(1.1 * i))
b <- c(0.5, -0.2, -0.9)
y <- 1.5 + as.vector(X %*% b) + 0.1 * sin(2.1 * i)
B1 <- lm_ref(X, y, 1, 1e-7)
B0 <- lm_ref(X, y, 0, 1e-7)
j <- 1:5
Xt <- cbind(2 + cos(0.3 * j), j / 4, sin(1.7 * j))
p1 <- as.vector(Xt %*% B1[1:3]) + B1[4]
p0 <- as.vector(Xt %*% B0)
fit <- as.vector(X %*% B1[1:3]) + B1[4]
wmat("p1.csv", p1)
wmat("p0.csv", p0)
wmat("pboth.csv", cbind(p0, p1))
wscalar("r2.scalar", 1 - sum((y - fit)^2) / sum((y - mean(y))^2))
wscalar("same.scalar", 0)
