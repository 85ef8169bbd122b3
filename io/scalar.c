/* scalar.c: scalar files. The data file holds just the value text; the
 * .mtd says data_type "scalar" and the value type. */
#include "ioint.h"

#include <stdlib.h>

int io_write_scalar_str(const char *path, const char *text, const char *value_type, BrErr *e)
{
    IoMeta m;
    io_meta_init(&m);
    snprintf(m.data_type, sizeof m.data_type, "scalar");
    snprintf(m.value_type, sizeof m.value_type, "%s", value_type ? value_type : "string");
    snprintf(m.format, sizeof m.format, "text");
    IoOut d;
    int rc = io_out_open(&d, path, e);
    if (rc) return rc;
    if (io_out_write(&d, text, strlen(text), e)) { io_out_abort(&d); return e->code; }
    return io_commit_with_mtd(&d, &m, e);
}

/* A string's text as SystemDS reads it (HDFSTool.readStringFromHDFSFile):
 * its lines (ended by \n, \r or \r\n) joined by \n, without the line end
 * of the last one; other spaces are kept (a spec file holding " \n" is
 * " "). Rewrites p[0..n) in place; returns the new length. */
static size_t string_lines(char *p, size_t n)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '\r') {
            if (i + 1 < n && p[i + 1] == '\n') i++;
            p[o++] = '\n';
        } else {
            p[o++] = p[i];
        }
    }
    if (o > 0 && p[o - 1] == '\n') o--;
    return o;
}

char *io_read_scalar_dup(const char *path, IoMeta *meta, const char *vt, BrErr *e)
{
    IoMeta m;
    bool found;
    if (io_read_mtd(path, &m, &found, e)) return NULL;
    if (found && m.data_type[0] && strcmp(m.data_type, "scalar")) {
        br_err(e, BR_EARG, "read %s: the .mtd says data_type \"%s\", not a scalar", path,
               m.data_type);
        return NULL;
    }
    IoBuf b;
    if (io_load(path, &b, e)) return NULL;
    size_t n = b.raw;
    if (!strcmp(vt ? vt : m.value_type, "string"))
        n = string_lines(b.p, n);
    else
        while (n > 0 && (b.p[n - 1] == '\n' || b.p[n - 1] == '\r' || b.p[n - 1] == ' ' ||
                         b.p[n - 1] == '\t'))
            n--;
    b.p[n] = 0;
    if (meta) *meta = m;
    return b.p;
}

int io_read_scalar(const char *path, char *buf, size_t n, IoMeta *meta, BrErr *e)
{
    char *s = io_read_scalar_dup(path, meta, NULL, e);
    if (!s) return e->code;
    size_t l = strlen(s);
    if (l >= n) {
        free(s);
        return br_err(e, BR_EIO, "%s: scalar value too long (%zu bytes)", path, l);
    }
    memcpy(buf, s, l + 1);
    free(s);
    return 0;
}
