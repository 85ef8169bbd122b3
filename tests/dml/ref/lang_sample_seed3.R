# lang_sample_seed3: the draws with the seed in third and in fourth place
# are equal (the values themselves are braid's generator's).
source("ref/_common.R")
wlines("stdout.txt", "TRUE TRUE TRUE 4")
