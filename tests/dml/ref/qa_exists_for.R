source("ref/_common.R")
wlines("stdout.txt", c(
  "z=TRUE u=FALSE W=FALSE V=TRUE",
  "byname z=TRUE nope=FALSE",
  "in function: TRUE",
  "i=1 i=2 ",
  "-2,-1,0,",
  "0.000 10.000 20.000 30.000",
  "",
  "k=3",
  "1 3 5 7 9 cnt=0"))
