# The sample moment of x of the given order: mean((x - c)^order), c the
# mean of x when central (0 otherwise), of |x - c| when absolute.
moment <- function(x, order = 1, central = FALSE, absolute = FALSE,
                   na.rm = FALSE) {
  if (na.rm) x <- x[!is.na(x)]
  d <- if (central) x - mean(x) else x
  if (absolute) d <- abs(d)
  sum(d^order) / length(d)
}
