source("ref/_common.R")
# properties (the case checks them itself): all hold
wscalar("majority_only.scalar", TRUE)
wscalar("ok.scalar", TRUE)
wscalar("seeded.scalar", TRUE)
wscalar("fallback.scalar", TRUE)
wscalar("unchanged.scalar", 0)
wlines("stdout.txt", "ratio should be greater than 0 and less than 0.5 setting ratio = 0.1")
