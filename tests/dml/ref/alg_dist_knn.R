source("ref/_common.R")
source("ref/_refdata.R")
# R's dist() and neighbours by ordering exact distances (ties by index).
X <- read_data("diabetes")$X
D <- as.matrix(dist(X[1:100, ]))
dimnames(D) <- NULL
wref("dist", D)
wscalar("dist_ok.scalar", TRUE)
wscalar("dist_sysds_ok.scalar", TRUE)
wscalar("dist_shape.scalar", "100x100")
knn <- function(R, Q, k) matrix(apply(Q, 1, function(q) {
  d <- sqrt(colSums((t(R) - q)^2))
  order(d)[1:k]
}), nrow = nrow(Q), byrow = TRUE)
wmat("knn.csv", knn(X[31:442, ], X[1:30, ], 7))
wmat("knn5.csv", knn(X[31:442, ], X[1:30, ], 5))
wmat("knn_self.csv", knn(X[1:50, ], X[1:50, ], 1))
