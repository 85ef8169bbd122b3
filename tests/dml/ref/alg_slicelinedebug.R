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
# codes: recode in order of appearance; bins of width 3 over [0, 9], centres 1.5 4.5 7.5
wlines("stdout.txt", c(
  "sliceLineDebug: 2 top slice(s)",
  "-- Slice #1: score=0.5, total error=10.0, max error=2.0, size=3",
  "   city = Wien",
  "   kind = b",
  "-- Slice #2: score=0.25, total error=4.0, max error=1.0, size=2",
  "   age = 7.5",
  "returned equals printed: TRUE",
  "sliceLineDebug: 0 top slice(s)"))
