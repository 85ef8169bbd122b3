/* fuzz_parser.c: libFuzzer target for the DML front end. Every input must
 * load into a program with no errors or fail with at least one error;
 * nothing may crash, leak or trip a sanitizer. Built and run by
 * fuzz/run.sh. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lang/dump.h"
#include "lang/load.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = 0;
    static const char *const names[] = { "out", "1", "flag" };
    static const char *const vals[] = { "/tmp/fuzz_out", "3", "TRUE" };
    static const char *const pre[] = { "X" };
    LangOptions o = { .arg_names = names, .arg_values = vals, .nargs = 3,
                      .predefined = pre, .npredefined = 1 };
    Diag *d = diag_new();
    Program *p = lang_load_string(text, "fuzz.dml", &o, d);
    if (p ? diag_nerrors(d) != 0 : diag_nerrors(d) == 0) abort();
    FILE *null = fopen("/dev/null", "w");
    if (null) {
        diag_print(d, null);
        if (p) {
            lang_dump_block(null, lang_main(p), 0);
            for (int i = 0; i < lang_nfuncs(p); i++) lang_dump_func(null, lang_func(p, i));
        }
        fclose(null);
    }
    if (p && lang_nfuncs(p) > 0) {
        const Func *f = lang_func(p, 0);
        if (lang_find_func(p, f->ns, f->name) != f) abort();
    }
    lang_program_free(p);
    diag_free(d);
    free(text);
    return 0;
}
