# frame_meta_natives: the masks and frames follow from the rules by hand:
# columns 1 and 3 dummycoded over 3 tokens each (a b c, x y z), column 2
# passed through; hashing column 1 into K = 5; freplicate copies the row.
source("ref/_common.R")
fr <- function(rows) c(paste0("# FRAME: nrow = ", length(rows), ", ncol = 3"), "# C1 C2 C3",
                       "# STRING FP64 STRING", rows, "")
wlines("stdout.txt", c("1.000 1.000 1.000 0.000 1.000 1.000 1.000", "width 7 = 7",
                       "1.000 0.000 1.000", "",
                       "1.000 1.000 1.000 1.000 1.000 0.000 0.000", "",
                       "0.000 0.000 0.000", "",
                       fr(rep("q 7.000 w", 4)), fr(rep("c 4.000 x", 2))))
