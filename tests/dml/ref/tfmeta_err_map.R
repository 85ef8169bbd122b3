source("ref/_common.R")
wlines("error.txt", c("nonzero", "recode map for column 'score' (id=5) not existing", "refdata/tfmeta_read/meta/Recode"))
