/* frames.c: frames through the embedding API (include/braid.h): bound by
 * copying columns into a frame block (matrix/fb.h), returned as views of
 * the block's columns. */
#include <stdlib.h>
#include <string.h>

#include "script.h"

static const FbType fb_types[] = {[BRAID_COL_STRING] = FB_STRING, [BRAID_COL_DOUBLE] = FB_FP64,
                                  [BRAID_COL_INT] = FB_INT64, [BRAID_COL_BOOL] = FB_BOOL};

/* Copies one column's cells into the frame's column c. */
static int fill_column(FbCol *c, const BraidColumn *src, int64_t rows, BrErr *e)
{
    size_t width = c->type == FB_FP64 ? sizeof(double) : c->type == FB_INT64 ? sizeof(int64_t) : 1;
    if (c->type != FB_STRING) {
        if (rows) memcpy(c->d, src->data, (size_t)rows * width);
        if (c->type == FB_BOOL)
            for (int64_t i = 0; i < rows; i++) c->b[i] = c->b[i] != 0;
        return 0;
    }
    const char *const *s = src->data;
    for (int64_t i = 0; i < rows; i++)
        if (s[i] && !(c->s[i] = br_strdup(s[i]))) return br_err(e, BR_ENOMEM, "out of memory");
    return 0;
}

FB *api_frame_copy(int64_t rows, const BraidColumn *cols, int ncols, BrErr *e)
{
    if (rows < 0 || ncols < 0) {
        br_err(e, BR_EARG, "invalid frame dimensions");
        return NULL;
    }
    FbType *types = calloc((size_t)(ncols ? ncols : 1), sizeof *types);
    if (!types) {
        br_err(e, BR_ENOMEM, "out of memory");
        return NULL;
    }
    for (int j = 0; j < ncols; j++) {
        if ((unsigned)cols[j].type > BRAID_COL_BOOL || (rows && !cols[j].data)) {
            free(types);
            br_err(e, BR_EARG, "frame column without data or with an unknown type");
            return NULL;
        }
        types[j] = fb_types[cols[j].type];
    }
    FB *f = fb_new(rows, ncols, types, e);
    free(types);
    for (int j = 0; f && j < ncols; j++)
        if (fill_column(f->c[j], &cols[j], rows, e) || (cols[j].name && fb_set_name(f, j, cols[j].name, e))) {
            fb_release(f);
            f = NULL;
        }
    return f;
}

int braid_bind_frame(BraidScript *s, const char *name, int64_t rows, const BraidColumn *cols, int ncols)
{
    BrErr e = {0};
    FB *f = api_frame_copy(rows, cols, ncols, &e);
    return f ? api_bind(s, name, val_frame(f)) : api_fail(s, e.msg);
}

int api_frame_view(const Value *v, BraidFrame *out, BrErr *e)
{
    memset(out, 0, sizeof *out);
    if (!v || v->kind != V_FRAME) return br_err(e, BR_EARG, "not a frame");
    FB *f = v->f;
    out->columns = calloc((size_t)(f->cols ? f->cols : 1), sizeof *out->columns);
    if (!out->columns) return br_err(e, BR_ENOMEM, "out of memory");
    static const BraidColType types[] = {[FB_STRING] = BRAID_COL_STRING, [FB_FP64] = BRAID_COL_DOUBLE,
                                         [FB_INT64] = BRAID_COL_INT, [FB_BOOL] = BRAID_COL_BOOL};
    for (int64_t j = 0; j < f->cols; j++) {
        FbCol *c = f->c[j];
        out->columns[j] = (BraidColumn){f->names[j], types[c->type],
                                        c->type == FB_STRING ? (const void *)c->s : (const void *)c->d};
    }
    out->rows = f->rows;
    out->cols = f->cols;
    out->handle = fb_retain(f);
    return 0;
}

int braid_get_frame_view(BraidScript *s, const char *name, BraidFrame *out)
{
    memset(out, 0, sizeof *out);
    Value *v = st_get(&s->results, name);
    if (!v) return api_fail(s, "no such output (or the script did not assign it)");
    if (v->kind != V_FRAME) return api_fail(s, "output is not a frame");
    BrErr e = {0};
    return api_frame_view(v, out, &e) ? api_fail(s, e.msg) : 0;
}

void braid_frame_free(BraidFrame *f)
{
    if (!f) return;
    fb_release(f->handle);
    free(f->columns);
    memset(f, 0, sizeof *f);
}
