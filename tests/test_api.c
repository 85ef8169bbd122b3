/* test_api.c: the embedding API (include/braid.h): prepare once, bind,
 * execute many times, read outputs; errors as strings, never crashes. */
#include <stdlib.h>
#include <string.h>

#include "include/braid.h"
#include "t.h"

int main(void)
{
    char *err = NULL;
    const char *in[] = {"X", "s", "name"}, *out[] = {"Y", "total", "msg", "n"};
    BraidScript *sc = braid_prepare("Y = X * s + 1\ntotal = sum(Y)\nmsg = \"hi \" + name\nn = nrow(X)\n",
                                    in, 3, out, 4, &err);
    T_CHECK(sc != NULL, "prepare: %s", err ? err : "");
    double X[6] = {1, 2, 3, 4, 5, 6};
    T_CHECK(braid_bind_matrix(sc, "X", X, 2, 3) == 0, "bind X");
    T_CHECK(braid_bind_string(sc, "name", "braid") == 0, "bind name");
    T_CHECK(braid_bind_double(sc, "nosuch", 1) != 0 && strstr(braid_error(sc), "nosuch"), "undeclared input");
    T_CHECK(braid_execute(sc) != 0 && strstr(braid_error(sc), "'s'"), "unbound input reported: %s", braid_error(sc));
    for (int k = 1; k <= 3; k++) {
        braid_bind_double(sc, "s", k);
        T_CHECK(braid_execute(sc) == 0, "execute %d: %s", k, braid_error(sc));
        double *Y, total, n;
        int64_t r, c;
        T_CHECK(braid_get_matrix(sc, "Y", &Y, &r, &c) == 0 && r == 2 && c == 3, "get Y");
        T_CHECK(Y[5] == 6.0 * k + 1, "Y value %g", Y[5]);
        braid_free(Y);
        T_CHECK(braid_get_double(sc, "total", &total) == 0 && total == 21.0 * k + 6, "total %g", total);
        T_CHECK(braid_get_double(sc, "n", &n) == 0 && n == 2, "n");
        char *msg;
        T_CHECK(braid_get_string(sc, "msg", &msg) == 0 && !strcmp(msg, "hi braid"), "msg");
        braid_free(msg);
    }
    double *none;
    int64_t r, c;
    T_CHECK(braid_get_matrix(sc, "nope", &none, &r, &c) != 0, "missing output");
    braid_script_free(sc);

    /* compile errors come back as strings with a position */
    sc = braid_prepare("x = 1\ny = (x + \n", NULL, 0, NULL, 0, &err);
    T_CHECK(sc == NULL && err && strstr(err, ":"), "syntax error message: %s", err ? err : "");
    braid_free(err);
    err = NULL;
    sc = braid_prepare("y = undefinedThing + 1\n", NULL, 0, NULL, 0, &err);
    T_CHECK(sc == NULL && err && strstr(err, "undefinedThing"), "undefined variable: %s", err ? err : "");
    braid_free(err);

    /* run-time errors */
    const char *in2[] = {"A"}, *out2[] = {"B"};
    sc = braid_prepare("B = A %*% A\n", in2, 1, out2, 1, NULL);
    double A[6] = {1, 2, 3, 4, 5, 6};
    braid_bind_matrix(sc, "A", A, 2, 3);
    T_CHECK(braid_execute(sc) != 0 && strstr(braid_error(sc), "dimension"), "dimension error: %s", braid_error(sc));
    braid_bind_matrix(sc, "A", A, 2, 2);
    T_CHECK(braid_execute(sc) == 0, "second run after an error");
    braid_script_free(sc);
    return t_done("test_api");
}
