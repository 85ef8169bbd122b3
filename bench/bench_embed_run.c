/* bench_embed_run.c: runs a DML file through the embedding API
 * (braid_run), as a host program would: no mallopt, no re-exec for
 * GOMP_SPINCOUNT (set it in the environment). For comparing the library
 * path's process CPU with the CLI's (bench/pool_api_cli.sh).
 *
 * Usage: bench_embed_run FILE [CONFIG|-] [THREADS] [ARG...] ($1, $2, ...) */
#include <stdio.h>
#include <stdlib.h>

#include "include/braid.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_embed_run FILE [CONFIG|-] [THREADS] [ARG...]\n");
        return 2;
    }
    static const char *names[] = {"1", "2", "3", "4", "5", "6", "7", "8"};
    BraidRunOptions o = {.file = argv[1], .seed = -1};
    if (argc > 2 && argv[2][0] != '-') o.config = argv[2];
    if (argc > 3) o.threads = atoi(argv[3]);
    o.arg_names = names;
    o.arg_values = (const char *const *)argv + 4;
    o.nargs = argc > 4 ? argc - 4 : 0;
    if (o.nargs > 8) o.nargs = 8;
    return braid_run(&o);
}
