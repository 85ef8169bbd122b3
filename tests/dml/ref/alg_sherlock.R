# alg_sherlock: every property holds (shapes from the network sizes of
# SystemDS's sherlock: 960/201/400/27 inputs, 300/200/400/80/500 hidden
# units, 78 types; the final network's input is 4 x 78 = 312 columns).
source("ref/_common.R")
wscalar("shapes.scalar", TRUE)
wscalar("finite.scalar", TRUE)
wscalar("rows.scalar", TRUE)
