source("ref/_common.R")
source("ref/_frame.R")
m <- read.csv("../data/frame_messy.csv", colClasses = "character", na.strings = "NA", check.names = FALSE)
m[m == ""] <- NA
name <- m$name
tab <- table(factor(name[!is.na(name)], levels = unique(name[!is.na(name)])))
name[is.na(name)] <- names(tab)[which.max(tab)]          # first of the most frequent
city <- m$city
city[is.na(city)] <- "Graz"
score <- as.numeric(m$score)
score[is.na(score)] <- mean(score, na.rm = TRUE)
joined <- as.numeric(m$joined == "TRUE")
wmat("X.csv", cbind(as.numeric(m$id), recode(name), recode(city), score, joined))
wscalar("diff.scalar", 0)
keep <- !is.na(m$score) & !is.na(m$name)
k <- m[keep, ]
wmat("X2.csv", cbind(as.numeric(k$id), recode(k$name), recode(k$city), as.numeric(k$score), as.numeric(k$joined == "TRUE")))
ent <- recode_meta   # metadata rows in SystemDS's order (java_map_order)
n2 <- max(length(unique(k$name)), length(unique(k$city)))
pad <- function(v) c(v, rep(NA, n2 - length(v)))
M2 <- list(rep(NA, n2), pad(ent(k$name)), pad(ent(k$city)), rep(NA, n2), rep(NA, n2))
wlines("stdout.txt", fstr(M2, rep("STRING", 5), names(m)))
