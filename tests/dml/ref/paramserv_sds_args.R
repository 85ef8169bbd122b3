# paramserv_sds_args: SBP with backup workers trains exactly as BSP here.
source("ref/_common.R")
wscalar("sbp_as_bsp.scalar", TRUE)
