source("ref/_common.R")
# the masks as SystemDS's CategoricalMask builds them: 2 + 3 distinct
# values dummycoded; no distinct count: 0 columns (plus one pass-through);
# "¿4" then a recoded column; a pass-through column, then K = 3
wlines("stdout.txt", c("1.000 1.000 1.000 1.000 1.000", "", "1",
                       "1.000 1.000 1.000 1.000 1.000", "",
                       "0.000 1.000 1.000 1.000", ""))
