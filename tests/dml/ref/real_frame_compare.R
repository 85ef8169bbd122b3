source("ref/_common.R")
s1 <- c("b", "a", "c", ""); s2 <- c("a", "a", "d", "")
n1 <- c(1.5, 2, -3, 4);     n2 <- c(1, 2, 3, 4)
b1 <- c(1, 0, 1, 0);        b2 <- c(1, 1, 0, 0)
blk <- function(f) cbind(f(s1, s2), f(n1, n2), f(b1, b2)) * 1
R <- cbind(blk(`<`), blk(`<=`), blk(`>`), blk(`>=`), blk(`==`), blk(`!=`))
wmat("r.csv", R)
wlines("stdout.txt", c("# FRAME: nrow = 1, ncol = 3", "# C1 C2 C3", "# STRING STRING STRING",
                       "BOOLEAN BOOLEAN BOOLEAN"))
