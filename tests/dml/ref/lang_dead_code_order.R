# lang_dead_code_order: hand-written expectation (R has no DML time() or
# dead-code elimination to compare with): the call whose result is unused
# still prints, and time() after the computation is later than before it.
source("ref/_common.R")
wlines("stdout.txt", c("called f", "done"))
wscalar("ok.scalar", TRUE)
