source("ref/_common.R")
source("ref/_frame.R")
m <- read.csv("../data/frame_messy.csv", colClasses = "character", na.strings = "NA", check.names = FALSE)
m[m == ""] <- NA
types <- c("INT64", "STRING", "STRING", "FP64", "BOOLEAN")
cols <- list(as.numeric(m$id), m$name, m$city, as.numeric(m$score), m$joined == "TRUE")
cols[[4]][is.na(cols[[4]])] <- NaN
out <- fstr(cols, types, names(m))
wscalar("dims.scalar", nrow(m) * 10 + ncol(m))
wscalar("same_a.scalar", TRUE)
# b.csv was written without a header: default names
out <- c(out, fstr(lapply(cols, function(x) x[1:2]), types))
wscalar("same_b.scalar", TRUE)
# text format has no names
r <- c(1:3, 5)
out <- c(out, fstr(lapply(cols, function(x) x[r]), types, sep = ","))
wmat("X.csv", cbind(cols[[1]], cols[[4]]))
h <- read_homes()
out <- c(out, fstr(lapply(h, identity), rep("STRING", 9), names(h), nrows = 3))
out <- c(out, fstr(list("saleprice", "askingprice"), c("STRING", "STRING")))
wmat("N.csv", sapply(h[, 3:6], as.numeric))
wscalar("n.scalar", paste0(h[20, 2], "/", h[1, 7]))
wlines("stdout.txt", out)
