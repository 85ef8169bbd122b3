# Helpers for the frame cases (not a case itself): frames as R lists of
# column vectors with SystemDS value types, printed the way SystemDS's
# toString prints frames, and the transform encodings computed with R's own
# tools (match/unique for recoding, arithmetic for equi-width bins).

# toString(F, sep=sep) of a frame as lines, plus the empty line print()
# adds after the final line separator: "# FRAME: nrow = R, ncol = C", the
# column names and the value types after "#", then the rows. FP64 cells
# with 3 decimals, BOOLEAN as TRUE/FALSE, missing values as "null".
fstr <- function(cols, types, names = paste0("C", seq_along(cols)), sep = " ", nrows = NULL) {
  n <- if (length(cols)) length(cols[[1]]) else 0
  shown <- if (is.null(nrows)) n else min(n, nrows)
  cell <- function(v, t) {
    if (is.numeric(v) && is.nan(v)) return("NaN")
    if (is.na(v)) return("null")
    switch(t,
           FP64 = { s <- sprintf("%.3f", v); if (s == "-0.000") "0.000" else s },
           INT64 = format(v, scientific = FALSE),
           BOOLEAN = if (v) "TRUE" else "FALSE",
           as.character(v))
  }
  rows <- character(0)
  for (i in seq_len(shown))
    rows <- c(rows, paste(mapply(function(col, t) cell(col[i], t), cols, types), collapse = sep))
  c(sprintf("# FRAME: nrow = %d, ncol = %d", n, length(cols)),
    paste(c("#", names), collapse = sep),
    paste(c("#", types), collapse = sep),
    rows, "")
}

# Recode codes: position of first appearance among the non-missing values.
recode <- function(x) match(x, unique(x[!is.na(x) & x != ""]))

# The order SystemDS writes a recode column's metadata rows in: the
# iteration order of Java's HashMap<String, Integer> its tokens were put in
# (first appearance first), for maps whose buckets stay lists (at most 8
# keys each): buckets ascending by Java's String.hashCode (over UTF-16
# units) spread (h ^ h >>> 16) and masked by the capacity, keys in insertion
# order within a bucket (resizes split lists in order); the capacity
# doubles from 16 while the size exceeds 3/4 of it.
java_map_order <- function(keys) {
  keys <- unique(keys)
  cap <- 16
  while (length(keys) > 0.75 * cap) cap <- cap * 2
  units <- function(s) {
    cp <- utf8ToInt(s)
    unlist(lapply(cp, function(c) if (c > 65535) {
      c <- c - 65536
      c(55296 + c %/% 1024, 56320 + c %% 1024)
    } else c))
  }
  bucket <- function(s) {
    h <- 0
    for (u in units(s)) h <- (31 * h + u) %% 4294967296
    hi <- h %/% 65536
    (bitwXor(as.integer(h %% 65536), as.integer(hi)) + 65536 * hi) %% cap
  }
  b <- vapply(keys, bucket, 0, USE.NAMES = FALSE)
  stopifnot(max(table(b)) <= 8)
  keys[order(b)]
}

# Metadata entries "token·code" of a recode column, in java_map_order.
recode_meta <- function(x) {
  u <- unique(x[!is.na(x) & x != ""])
  o <- java_map_order(u)
  paste0(o, rawToChar(as.raw(c(0xc2, 0xb7))), match(o, u))
}

# Equi-width bin codes of x over [lo, hi] with k bins: bin i holds
# (lo + (i-1)w, lo + i w], the first also lo; outside: NA.
ewbin <- function(x, k, lo = min(x, na.rm = TRUE), hi = max(x, na.rm = TRUE)) {
  w <- (hi - lo) / k
  # SystemDS: ceil((x - lo) / w) clamped to 1..k (outside values included)
  b <- pmax(1, ceiling((x - lo) / w))
  pmin(b, k)
}

# One-hot columns of codes 1..k (NA: a row of zeros).
onehot <- function(code, k) {
  m <- matrix(0, length(code), k)
  for (i in seq_along(code)) if (!is.na(code[i])) m[i, code[i]] <- 1
  m
}

# The homes data of tests/data/homes.csv (as strings).
read_homes <- function() read.csv("../data/homes.csv", colClasses = "character", check.names = FALSE)
