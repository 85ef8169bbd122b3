source("ref/_common.R")
# slicefinder delegates to sliceLine (checked by alg_sliceline): equality
# of the two, as a property.
wlines("stdout.txt", c("slices found: 3", "same as sliceLine: TRUE"))
