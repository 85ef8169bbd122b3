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

char *io_read_scalar_dup(const char *path, IoMeta *meta, BrErr *e)
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
    if (strcmp(m.value_type, "string"))
        while (n > 0 && (b.p[n - 1] == '\n' || b.p[n - 1] == '\r' || b.p[n - 1] == ' ' ||
                         b.p[n - 1] == '\t'))
            n--;
    b.p[n] = 0;
    if (meta) *meta = m;
    return b.p;
}

int io_read_scalar(const char *path, char *buf, size_t n, IoMeta *meta, BrErr *e)
{
    char *s = io_read_scalar_dup(path, meta, e);
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
