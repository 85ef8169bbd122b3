source("ref/_common.R")
wlines("error.txt", c("nonzero", "binning map for column 'name' (id=1) not existing", "refdata/tfmeta_read/meta/Bin"))
