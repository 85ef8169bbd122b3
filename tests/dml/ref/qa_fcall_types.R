source("ref/_common.R")
# hand-written: SystemDS's FunctionCallCPInstruction converts scalar inputs
# to the declared value type (ScalarObjectFactory.createScalarObject)
wlines("stdout.txt", c(
  "x=3.0 k=2 b=TRUE",
  "x=7.0 k=3 b=FALSE",
  "x=0.5 k=2 b=TRUE",
  "lambda=1.0 reg=1.0 1 2 3 half=1",
  "lambda=2.0 reg=1.0 1 2 3 4 5 half=2",
  "lambda=0.0 reg=0.25 1 2 3 4 5 6 7 half=3",
  "x=7.0 k=3 b=FALSE"))
