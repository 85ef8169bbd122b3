# Runs the Python reference of a case (not a case itself).
#
# ref/<case>.R of a case whose expected outputs come from scikit-learn,
# NumPy or SciPy is the two lines
#     source("ref/_python.R")
# which clears expected/<case>/ and refdata/<case>/ and runs
#     python3 ref/<case>.py expected/<case> refdata/<case>
# with Debian's python3 (apt-get install python3-sklearn python3-numpy
# python3-scipy), or the interpreter named by BRAID_REF_PYTHON.
source("ref/_common.R")
REF_DATA <- file.path("refdata", CASE)
unlink(REF_DATA, recursive = TRUE)
dir.create(REF_DATA, recursive = TRUE, showWarnings = FALSE)
local({
  py <- Sys.getenv("BRAID_REF_PYTHON", "/usr/bin/python3")
  script <- file.path("ref", paste0(CASE, ".py"))
  status <- system2(py, c(script, EXP_DIR, REF_DATA))
  if (status != 0) stop("the Python reference ", script, " failed (status ", status, ")")
})
