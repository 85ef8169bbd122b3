source("ref/_common.R")
source("ref/_refdata.R")
# sliceLineDebug's listing vs R: a frame with named columns (two recoded,
# one equi-width binned into 3 bins over [0, 9]), hand-made slices decoded
# to tokens and bin centres; no slices.
F <- data.frame(city = c("Graz", "Wien", "Graz", "Linz", "Wien", "Linz"),
                age = c(0, 2, 4.5, 6, 7.5, 9),
                kind = c("b", "a", "a", "b", "b", "a"))
write.csv(F, file.path(REF_DATA, "F.csv"), row.names = FALSE, quote = FALSE)
writeLines('{"data_type": "frame", "rows": 6, "cols": 3, "format": "csv", "header": true, "sep": ","}',
           file.path(REF_DATA, "F.csv.mtd"))
# codes: recode in order of appearance (Graz Wien Linz; b a), the recode
# metadata rows in Java's HashMap order (Wien Graz Linz; a b: see
# java_map_order in _frame.R); bins of
# width 3 over [0, 9] ("lo·hi" metadata), centres 1.5 4.5 7.5. SystemDS's
# script prints its inputs (toString: 3 decimals, the frame with its
# header lines), then per slice score and size, total error / size and the
# max error, and the predicates joined by AND.
dot <- "\u00b7"
wlines("stdout.txt", c(
  "", "sliceLineDebug: input",
  "2.000 0.000 1.000", "0.000 3.000 0.000", "",
  "0.500 10.000 2.000 3.000", "0.250 4.000 1.000 2.000", "",
  "# FRAME: nrow = 3, ncol = 3", "# city age kind", "# STRING STRING STRING",
  paste0("Wien", dot, "2 0.0", dot, "3.0 a", dot, "2"),
  paste0("Graz", dot, "1 3.0", dot, "6.0 b", dot, "1"),
  paste0("Linz", dot, "3 6.0", dot, "9.0 null"), "",
  "-- Slice #1: score=0.5, size=3.0",
  paste0("---- avg error=", jstr(10 / 3), ", max error=2.0"),
  "---- predicate: city = Wien AND kind = b",
  "-- Slice #2: score=0.25, size=2.0",
  "---- avg error=2.0, max error=1.0",
  "---- predicate: age = 7.5",
  "returns TK: TRUE"))
