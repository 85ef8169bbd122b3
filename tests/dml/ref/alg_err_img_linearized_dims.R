source("ref/_common.R")
wlines("error.txt", c("nonzero", "img_rotate_linearized", "rows of 20 pixels are not images of s_cols x s_rows = 4 x 4"))
