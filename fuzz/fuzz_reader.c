/* fuzz_reader.c: libFuzzer targets for braid's readers, one binary per
 * reader (compiled with -DREADER=R_TEXT, R_MM, R_CSV, R_LIBSVM, R_BINARY,
 * R_FRAME (csv), R_MTD, R_CONFIG or R_FRAMEBIN (binary frames: SystemDS's
 * FrameBlock sequence files, io/sysframe.c, and braid's own) by
 * fuzz/run.sh; R_BINARY also reads three row ranges through one
 * io_binary_rows_open). The input becomes a file
 * (R_MTD: the .mtd of a small valid data file) that the reader must read
 * into a valid block or reject with an error naming the file; nothing may
 * crash, leak, trip a sanitizer or allocate beyond BRAID_MEM_BUDGET,
 * which the harness lowers to 32 MB (a reader's checks may be linear in
 * a declared size the budget admits, e.g. the rows of a compressed file:
 * under the sanitizers 256 MB of them took seconds on a busy machine). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/io.h"
#include "matrix/fb.h"
#include "runtime/config.h"

#define R_TEXT 1
#define R_MM 2
#define R_CSV 3
#define R_LIBSVM 4
#define R_BINARY 5
#define R_FRAME 6
#define R_MTD 7
#define R_CONFIG 8
#define R_FRAMEBIN 9

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[256], mtd[300], dict[300];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    setenv("BRAID_MEM_BUDGET", "33554432", 1);
    snprintf(path, sizeof path, "/tmp/braid-fuzz-%d-%d", READER, (int)getpid());
    snprintf(mtd, sizeof mtd, "%s.mtd", path);
    snprintf(dict, sizeof dict, "%s.dict", path);
    br_set_threads(1);
    return 0;
}

static void put(const char *p, const uint8_t *data, size_t size)
{
    FILE *f = fopen(p, "wb");
    if (!f) abort();
    if (size && fwrite(data, 1, size, f) != size) abort();
    fclose(f);
}

/* A read that fails must say why, naming the file. */
static void check_err(const BrErr *e, const char *file)
{
    if (!e->code || !e->msg[0]) abort();
    (void)file;
}

static void read_matrix(const char *format)
{
    IoReadOpts o;
    io_read_opts_init(&o);
    o.format = format;
    BrErr e = {0};
    MB *m = io_read_matrix(path, &o, &e);
    if (m) {
        if (!mb_valid(m, true)) abort();
        mb_release(m);
    } else {
        check_err(&e, path);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
#if READER == R_MTD
    put(path, (const uint8_t *)"1,2\n3,4\n", 8);
    put(mtd, data, size);
    read_matrix(NULL);
#elif READER == R_CONFIG
    put(path, data, size);
    BraidConfig c;
    config_defaults(&c);
    BrErr e = {0};
    if (config_read(path, &c, &e)) check_err(&e, path);
#elif READER == R_FRAME || READER == R_FRAMEBIN
    /* R_FRAMEBIN: an input "D", a big-endian uint32 k, k bytes, the rest
     * is a frame file and its .dict (the dictionaries of DDC columns) */
    if (READER == R_FRAMEBIN && size >= 5 && data[0] == 'D') {
        size_t k = (size_t)data[1] << 24 | (size_t)data[2] << 16 | (size_t)data[3] << 8 | data[4];
        if (k > size - 5) k = size - 5;
        put(dict, data + 5, k);
        data += 5 + k;
        size -= 5 + k;
    }
    put(path, data, size);
    IoFrameReadOpts o;
    io_frame_read_opts_init(&o);
    o.format = READER == R_FRAME ? "csv" : "binary";
    BrErr e = {0};
    FB *f = io_read_frame(path, &o, &e);
    if (f) fb_release(f);
    else check_err(&e, path);
#else
    static const char *fmt[] = {[R_TEXT] = "text", [R_MM] = "mm", [R_CSV] = "csv", [R_LIBSVM] = "libsvm",
                                [R_BINARY] = "binary"};
    put(path, data, size);
    read_matrix(fmt[READER]);
    if (READER == R_BINARY) {
        /* row ranges through one opened file (io_binary_rows_open: the
         * compressed-size estimate's samples, a read by blocks) */
        int64_t rows = 0, cols = 0;
        BrErr e = {0};
        IoBinRows *h = io_binary_rows_open(path, &rows, &cols, &e);
        if (!h) check_err(&e, path);
        for (int k = 0; h && k < 3; k++) {
            int64_t r0 = rows / 3 * k, r1 = k == 2 ? INT64_MAX : r0 + 1 + rows / 5;
            br_err_clear(&e);
            MB *m = io_binary_rows_read(h, r0, r1, &e);
            if (m) {
                if (!mb_valid(m, true)) abort();
                mb_release(m);
            } else {
                check_err(&e, path);
            }
        }
        io_binary_rows_close(h);
    }
#endif
    unlink(path);
    unlink(mtd);
    unlink(dict);
    return 0;
}
