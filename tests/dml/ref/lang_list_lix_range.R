source("ref/_common.R")
# SystemDS's list left indexing, written out: X ends as f=1, b=3, c=7,
# d=5, e=4 (5 x 1 after as.matrix); U as 1, 3, 7, 5, 4; N as p=10, q=20,
# c=3; W renamed x, y, z; S as 1, 9, 3 (the value at the range's start)
wscalar("named.scalar", 5 * sum(c(1, 3, 7, 5, 4)) + 1)
wscalar("unnamed.scalar", sum(c(1, 3, 7, 5, 4)))
wscalar("byname.scalar", 10 + 20 + 3)
wscalar("whole.scalar", 8)
wscalar("start.scalar", 1 + 9 + 3)
