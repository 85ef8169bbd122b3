# expected/ comes from SystemDS's impurityMeasures rules in plain Python
# (ref/alg_impuritymeasures.py) on the committed inputs in refdata/, which
# this script keeps (they were drawn once with NumPy).
source("ref/_common.R")
local({
  py <- Sys.getenv("BRAID_REF_PYTHON", "/usr/bin/python3")
  status <- system2(py, c("ref/alg_impuritymeasures.py", EXP_DIR, file.path("refdata", CASE)))
  if (status != 0) stop("ref/alg_impuritymeasures.py failed (status ", status, ")")
})
