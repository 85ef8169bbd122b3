/* apply.h: the semantics of every operator over run-time values, keyed by
 * opcode (kernels/apply.c). Scalars follow SystemDS (int64 vs double vs
 * boolean vs string arithmetic), matrices go to the kernels, lists and
 * frames to their own rules. The interpreter, constant folding (hops/)
 * and the unfused fallback of fused operators (codegen/) all call these,
 * so every plan gives the same semantics. On error a function returns
 * non-zero with e set; *out receives a new value (caller releases). */
#ifndef BRAID_APPLY_H
#define BRAID_APPLY_H

#include "../base/ops.h"
#include "../matrix/value.h"

/* Index dimension modes of right and left indexing. */
enum { IX_ALL = 0, IX_SINGLE = 1, IX_RANGE = 2 };

/* The shape of an indexing operation: how rows and columns are given
 * (IX_ALL, IX_SINGLE, IX_RANGE) and whether there is a column dimension
 * at all (X[i] has none). */
typedef struct IxSpec {
    int rmode, cmode;
    bool has_col;
} IxSpec;

int ap_unary(OpCode op, const Value *a, Value *out, BrErr *e);
int ap_binary(OpCode op, const Value *a, const Value *b, Value *out, BrErr *e);
/* ifelse(c, a, b) */
int ap_ternary(const Value *c, const Value *a, const Value *b, Value *out, BrErr *e);
int ap_agg(OpCode op, AggDir dir, const Value *a, Value *out, BrErr *e);
/* t, rev, diag */
int ap_reorg(OpCode op, const Value *a, Value *out, BrErr *e);
/* Matrix products by physical operator: OP_MATMUL a %*% b; OP_TSMM t(a)%*%a
 * (left != 0) or a%*%t(a); OP_MMCHAIN t(a) %*% (c * (a %*% b)) (c: a
 * weight vector or V_NONE); OP_MATMULTL t(a) %*% b. */
int ap_matmul(OpCode op, int left, const Value *a, const Value *b, const Value *c, Value *out, BrErr *e);
/* Right indexing args[0][args[1]:args[2], args[3]:args[4]] of a matrix,
 * frame, list or scalar (1-based bounds as values). */
int ap_rix(const IxSpec *ix, Value *args, Value *out, BrErr *e);
/* The 0-based half-open ranges rows r[0]:r[1], columns r[2]:r[3] that
 * ap_rix selects of a rows x cols matrix (its bounds errors). */
int ap_rix_range(const IxSpec *ix, const Value *args, int64_t rows, int64_t cols, int64_t r[4], BrErr *e);
/* Left indexing args[0][args[2]:args[3], args[4]:args[5]] = args[1]; may
 * steal args[0] (set to V_NONE) to update in place when can_steal. */
int ap_lix(const IxSpec *ix, Value *args, bool can_steal, Value *out, BrErr *e);
/* A value as a frame: a frame is borrowed; a matrix or scalar converts
 * into *tmp (caller releases). NULL with e set (naming `what`) for others. */
const FB *ap_as_frame(const Value *v, const char *what, FB **tmp, BrErr *e);

#endif
