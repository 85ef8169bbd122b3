/* embed.c: braid as a library. Prepares a ridge-regression script once,
 * then runs it for several regularization constants on data made in C,
 * reading the coefficients and the training error back.
 * Build: make build/examples/embed; run: build/examples/embed */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "include/braid.h"

static const char *SCRIPT =
    "A = t(X) %*% X + diag(matrix(lambda, rows=ncol(X), cols=1))\n"
    "b = t(X) %*% y\n"
    "beta = solve(A, b)\n"
    "rmse = sqrt(mean((X %*% beta - y)^2))\n";

int main(void)
{
    enum { N = 2000, M = 5 };
    double *X = malloc(sizeof(double) * N * M), *y = malloc(sizeof(double) * N);
    const double w[M] = {1.5, -2.0, 0.5, 3.0, -1.0};
    for (int i = 0; i < N; i++) {
        y[i] = 0;
        for (int j = 0; j < M; j++) {
            X[i * M + j] = sin(0.37 * i + 1.3 * j) + 0.1 * cos(2.1 * i * (j + 1));
            y[i] += w[j] * X[i * M + j];
        }
        y[i] += 0.01 * sin(17.0 * i);
    }
    char *err = NULL;
    const char *in[] = {"X", "y", "lambda"}, *out[] = {"beta", "rmse"};
    BraidScript *s = braid_prepare(SCRIPT, in, 3, out, 2, &err);
    if (!s) { fprintf(stderr, "prepare: %s\n", err); braid_free(err); return 1; }
    braid_bind_matrix(s, "X", X, N, M);
    braid_bind_matrix(s, "y", y, N, 1);
    const double lambdas[] = {0.0, 1.0, 100.0};
    for (int k = 0; k < 3; k++) {
        braid_bind_double(s, "lambda", lambdas[k]);
        if (braid_execute(s)) { fprintf(stderr, "execute: %s\n", braid_error(s)); return 1; }
        double *beta, rmse;
        int64_t r, c;
        braid_get_matrix(s, "beta", &beta, &r, &c);
        braid_get_double(s, "rmse", &rmse);
        printf("lambda=%-6g rmse=%.5f beta=", lambdas[k], rmse);
        for (int64_t i = 0; i < r; i++) printf(" %.4f", beta[i]);
        printf("\n");
        braid_free(beta);
    }
    braid_script_free(s);
    free(X);
    free(y);
    return 0;
}
