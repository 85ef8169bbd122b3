# Reference matrices that a case reads (not a case itself): after
# source("ref/_common.R"), source("ref/_refdata.R") clears refdata/<case>/;
# wref(name, X) writes refdata/<case>/<name>.csv with its .mtd, which the
# case reads as read("refdata/<case>/<name>.csv").
REF_DATA <- file.path("refdata", CASE)
unlink(REF_DATA, recursive = TRUE)
dir.create(REF_DATA, recursive = TRUE, showWarnings = FALSE)

wref <- function(name, X) {
  if (is.null(dim(X))) X <- matrix(X, ncol = 1)
  X <- as.matrix(X)
  path <- file.path(REF_DATA, paste0(name, ".csv"))
  writeLines(apply(X, 1, function(r) paste(num_str(r), collapse = ",")), path)
  writeLines(sprintf(paste0('{\n "data_type": "matrix",\n "value_type": "double",\n',
                            ' "rows": %d,\n "cols": %d,\n "nnz": %d,\n "format": "csv",\n',
                            ' "header": false,\n "sep": ","\n}'),
                     nrow(X), ncol(X), sum(X != 0)), paste0(path, ".mtd"))
}

# tests/data/<name>_X.csv and _y.csv
read_data <- function(name) {
  X <- as.matrix(read.csv(file.path("..", "data", paste0(name, "_X.csv")), header = FALSE))
  dimnames(X) <- NULL
  y <- read.csv(file.path("..", "data", paste0(name, "_y.csv")), header = FALSE)[, 1]
  list(X = X, y = y)
}
