source("ref/_common.R")
wlines("error.txt", c("nonzero", "transformapply", "code 7 of column 1 lies past the 2 encoded columns"))
