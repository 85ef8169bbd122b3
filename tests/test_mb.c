/* test_mb.c: matrix block construction, conversion and format choice. */
#include "t.h"
#include <stdlib.h>

static MB *rnd(int64_t r, int64_t c, double sp, unsigned seed)
{
    BrErr e = {0};
    MB *m = mb_dense(r, c, &e);
    srand(seed);
    for (int64_t i = 0; i < r * c; i++)
        if ((double)rand() / RAND_MAX < sp) m->d[i] = (double)(rand() % 100) - 50.5;
    mb_recount_nnz(m);
    return m;
}

int main(void)
{
    BrErr e = {0};
    int64_t shapes[][2] = {{0, 5}, {5, 0}, {1, 1}, {7, 1}, {1, 9}, {50, 3}, {3, 70}};
    double sps[] = {0, 0.001, 0.1, 1};
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
        for (size_t k = 0; k < 4; k++) {
            MB *d = rnd(shapes[s][0], shapes[s][1], sps[k], (unsigned)(s * 7 + k));
            MB *sp = mb_to_sparse(d, &e);
            T_CHECK(sp && sp->sparse && sp->nnz == d->nnz, "to_sparse nnz");
            MB *back = mb_to_dense(sp, &e);
            T_MB_EQ(back, d, 0, "round trip %zu %zu", s, k);
            MB *c = mb_copy(sp, &e);
            T_CHECK(mb_examine(c, &e) == 0, "examine");
            T_CHECK(c->sparse == (mb_should_be_sparse(c->rows, c->cols, c->nnz) ||
                                  (c->nnz == 0 && c->rows * c->cols > 0)), "format rule");
            T_MB_EQ(c, d, 0, "examine keeps values");
            mb_release(d); mb_release(sp); mb_release(back); mb_release(c);
        }
    /* appendable sparse build */
    MB *b = mb_sp_new(4, 4, 0, &e);
    T_CHECK(mb_sp_append(b, 0, 1, 2.0, &e) == 0, "append");
    T_CHECK(mb_sp_append(b, 2, 0, 3.0, &e) == 0, "append");
    T_CHECK(mb_sp_append(b, 2, 3, 0.0, &e) == 0, "append zero dropped");
    T_CHECK(mb_sp_append(b, 3, 3, 4.0, &e) == 0, "append");
    T_CHECK(mb_sp_append(b, 1, 0, 4.0, &e) != 0, "out of order rejected");
    mb_sp_finish(b);
    T_CHECK(b->nnz == 3 && mb_get(b, 2, 0) == 3.0 && mb_get(b, 1, 1) == 0 &&
            b->rp[4] == 3 && b->rp[1] == 1 && b->rp[2] == 1, "built CSR");
    mb_release(b);
    MB *z = mb_empty(1000, 1000, &e);
    T_CHECK(z && z->sparse && mb_bytes(z) < 20000, "empty is cheap");
    mb_release(z);
    return t_done("test_mb");
}
