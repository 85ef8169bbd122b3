source("ref/_common.R")
wlines("error.txt", c("nonzero", "getCategoricalMask", "only specs with \"ids\": true are supported"))
