/* _braid.c: the CPython extension under the `braid` package
 * (python/braid/__init__.py), a thin layer over the embedding API
 * (include/braid.h). Built against Debian's python3-dev only; it needs no
 * NumPy headers: arrays come in through the buffer protocol (a C-contiguous
 * float64 buffer is bound as a view, without a copy; other strides are
 * copied once) and matrices go out as Matrix objects that export braid's
 * storage through the buffer protocol, so numpy.asarray wraps them without
 * a copy. The Python layer converts everything else (dtypes, scipy.sparse,
 * pandas).
 *
 * Types:
 *   Script   a prepared script (braid_prepare); bind(), bind_csr(),
 *            execute() (the GIL released while braid runs), get().
 *   Matrix   an output view (BraidMatrix); dense: a 2-D float64 buffer;
 *            CSR: part("indptr" | "indices" | "values") gives 1-D buffers.
 *   Part     one array of a Matrix, keeping the Matrix alive.
 * Errors raise braid.BraidError with braid's message (file:line:col). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdbool.h>
#include <string.h>

#include "include/braid.h"

static PyObject *BraidError;

/* ---- Script ---- */

typedef struct {
    PyObject_HEAD
    BraidScript *s;
    int busy;            /* an execute() runs (the GIL released) */
} Script;

static PyObject *fail_script(Script *sc)
{
    PyErr_SetString(BraidError, braid_error(sc->s));
    return NULL;
}

/* The n strings of a sequence as a malloc'd array of pointers into the
 * sequence's str objects (valid while seq lives); NULL with an exception. */
static const char **strings(PyObject *seq, Py_ssize_t *n)
{
    *n = PySequence_Fast_GET_SIZE(seq);
    const char **v = PyMem_Calloc((size_t)*n + 1, sizeof *v);
    if (!v) return (const char **)PyErr_NoMemory();
    for (Py_ssize_t i = 0; i < *n; i++) {
        v[i] = PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(seq, i));
        if (!v[i]) { PyMem_Free(v); return NULL; }
    }
    return v;
}

/* Script(text=None, path=None, inputs=(), outputs=(), arg_names=(),
 * arg_values=()): compiles once. */
static int script_init(Script *self, PyObject *args, PyObject *kw)
{
    static char *kwl[] = {"text", "path", "inputs", "outputs", "arg_names", "arg_values", NULL};
    const char *text = NULL, *path = NULL;
    PyObject *in = NULL, *out = NULL, *an = NULL, *av = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|zzOOOO", kwl, &text, &path, &in, &out, &an, &av)) return -1;
    if (!text == !path) {
        PyErr_SetString(PyExc_TypeError, "give exactly one of text and path");
        return -1;
    }
    PyObject *seqs[4] = {NULL, NULL, NULL, NULL}, *src[4] = {in, out, an, av}, *none = PyTuple_New(0);
    const char **v[4] = {NULL, NULL, NULL, NULL};
    Py_ssize_t n[4] = {0, 0, 0, 0};
    int rc = -1;
    for (int k = 0; k < 4 && none; k++) {
        seqs[k] = PySequence_Fast(src[k] && src[k] != Py_None ? src[k] : none, "expected a sequence of str");
        if (!seqs[k] || !(v[k] = strings(seqs[k], &n[k]))) goto done;
    }
    if (!none) goto done;
    if (n[2] != n[3]) { PyErr_SetString(PyExc_ValueError, "arg_names and arg_values differ in length"); goto done; }
    char *err = NULL;
    braid_script_free(self->s);
    Py_BEGIN_ALLOW_THREADS
    self->s = text ? braid_prepare(text, v[0], (int)n[0], v[1], (int)n[1], &err)
                   : braid_prepare_file(path, v[2], v[3], (int)n[2], v[0], (int)n[0], v[1], (int)n[1], &err);
    Py_END_ALLOW_THREADS
    if (!self->s) {
        PyErr_SetString(BraidError, err ? err : "cannot prepare the script");
        braid_free(err);
        goto done;
    }
    rc = 0;
done:
    for (int k = 0; k < 4; k++) { Py_XDECREF(seqs[k]); PyMem_Free(v[k]); }
    Py_XDECREF(none);
    return rc;
}

static void script_dealloc(Script *self)
{
    braid_script_free(self->s);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int ready(Script *self)
{
    if (!self->s) { PyErr_SetString(BraidError, "the script was not prepared"); return -1; }
    if (self->busy) { PyErr_SetString(BraidError, "the script is executing in another thread"); return -1; }
    return 0;
}

/* A buffer braid borrows: released (with the GIL) when braid lets go. */
typedef struct Held { Py_buffer b[3]; int n; } Held;

static void held_release(void *ctx)
{
    Held *h = ctx;
    PyGILState_STATE g = PyGILState_Ensure();
    for (int i = 0; i < h->n; i++) PyBuffer_Release(&h->b[i]);
    PyMem_RawFree(h);
    PyGILState_Release(g);
}

static bool is_double(const Py_buffer *b)
{
    const char *f = b->format ? b->format : "B";
    if (*f == '@' || *f == '=' || *f == '<') f++;
    return !strcmp(f, "d") && b->itemsize == 8;
}

/* A float64 buffer of 0, 1 (a column vector) or 2 dimensions: bound as a
 * view when C-contiguous or Fortran-contiguous (the script then reads the
 * transpose of braid's row-major view, include/braid.h), else copied by
 * its strides. Takes h. */
static int bind_buffer(Script *self, const char *name, Held *h)
{
    Py_buffer *b = &h->b[0];
    int64_t rows = b->ndim > 0 ? b->shape[0] : 1, cols = b->ndim > 1 ? b->shape[1] : 1;
    if (b->ndim > 2 || !is_double(b)) {
        PyErr_Format(PyExc_TypeError, "input '%s': braid binds float64 buffers of at most 2 dimensions", name);
        held_release(h);
        return -1;
    }
    if (PyBuffer_IsContiguous(b, 'C'))
        return braid_bind_matrix_view(self->s, name, b->buf, rows, cols, held_release, h);
    if (PyBuffer_IsContiguous(b, 'F'))
        return braid_bind_matrix_view_colmajor(self->s, name, b->buf, rows, cols, held_release, h);
    int64_t rs = b->ndim > 0 ? b->strides[0] : 8, cs = b->ndim > 1 ? b->strides[1] : 8;
    int rc = -1;
    if (rs % 8 || cs % 8) PyErr_Format(PyExc_TypeError, "input '%s': strides not a multiple of 8 bytes", name);
    else rc = braid_bind_matrix_strided(self->s, name, b->buf, rows, cols, rs / 8, cs / 8);
    held_release(h);
    return rc;
}

/* A list of numbers (a column vector) or of equal-length lists (rows),
 * copied. */
static int bind_list(Script *self, const char *name, PyObject *seq)
{
    Py_ssize_t rows = PySequence_Fast_GET_SIZE(seq), cols = 1;
    PyObject *first = rows ? PySequence_Fast_GET_ITEM(seq, 0) : NULL;
    bool nested = first && (PyList_Check(first) || PyTuple_Check(first));
    if (nested) cols = PySequence_Size(first);
    Py_ssize_t cells = rows * cols;
    double *d = PyMem_Malloc((size_t)(cells > 0 ? cells : 1) * sizeof *d);
    if (!d) { PyErr_NoMemory(); return -1; }
    for (Py_ssize_t i = 0; i < rows && !PyErr_Occurred(); i++) {
        PyObject *row = PySequence_Fast_GET_ITEM(seq, i);
        PyObject *r = nested ? PySequence_Fast(row, "rows must be lists") : NULL;
        if (nested && r && PySequence_Fast_GET_SIZE(r) != cols)
            PyErr_Format(PyExc_ValueError, "input '%s': rows of different lengths", name);
        for (Py_ssize_t j = 0; j < cols && !PyErr_Occurred(); j++)
            d[i * cols + j] = PyFloat_AsDouble(nested ? PySequence_Fast_GET_ITEM(r, j) : row);
        Py_XDECREF(r);
    }
    int rc = PyErr_Occurred() ? -1 : braid_bind_matrix(self->s, name, d, rows, cols);
    PyMem_Free(d);
    return rc;
}

/* bind(name, value): bool, int, float, str, a float64 buffer, or a list. */
static PyObject *script_bind(Script *self, PyObject *args)
{
    const char *name;
    PyObject *v;
    if (!PyArg_ParseTuple(args, "sO", &name, &v) || ready(self)) return NULL;
    int rc;
    if (PyBool_Check(v)) rc = braid_bind_bool(self->s, name, v == Py_True);
    else if (PyLong_Check(v)) {
        int overflow;
        long long i = PyLong_AsLongLongAndOverflow(v, &overflow);
        rc = overflow ? braid_bind_double(self->s, name, PyLong_AsDouble(v)) : braid_bind_int(self->s, name, i);
    } else if (PyFloat_Check(v)) rc = braid_bind_double(self->s, name, PyFloat_AsDouble(v));
    else if (PyUnicode_Check(v)) {
        const char *t = PyUnicode_AsUTF8(v);
        if (!t) return NULL;
        rc = braid_bind_string(self->s, name, t);
    } else if (PyObject_CheckBuffer(v)) {
        Held *h = PyMem_RawCalloc(1, sizeof *h);
        if (!h) return PyErr_NoMemory();
        if (PyObject_GetBuffer(v, &h->b[0], PyBUF_RECORDS_RO)) { PyMem_RawFree(h); return NULL; }
        h->n = 1;
        rc = bind_buffer(self, name, h);
    } else if (PyList_Check(v) || PyTuple_Check(v)) {
        PyObject *seq = PySequence_Fast(v, "");
        rc = seq ? bind_list(self, name, seq) : -1;
        Py_XDECREF(seq);
    } else {
        PyErr_Format(PyExc_TypeError, "input '%s': cannot bind a %s", name, Py_TYPE(v)->tp_name);
        return NULL;
    }
    if (rc && PyErr_Occurred()) return NULL;
    if (rc) return fail_script(self);
    Py_RETURN_NONE;
}

static int index_bits(const Py_buffer *b)
{
    const char *f = b->format ? b->format : "B";
    if (*f == '@' || *f == '=' || *f == '<') f++;
    return strlen(f) == 1 && strchr("ilq", *f) && (b->itemsize == 4 || b->itemsize == 8) ? (int)b->itemsize * 8 : 0;
}

/* bind_csr(name, rows, cols, indptr, indices, values, csc=False): the
 * three arrays of a CSR (or, with csc, CSC) matrix of rows x cols (1-D
 * buffers; values float64, indexes 32- or 64-bit), borrowed where braid
 * can (include/braid.h). */
static PyObject *script_bind_csr(Script *self, PyObject *args)
{
    const char *name;
    long long rows, cols;
    PyObject *o[3];
    int csc = 0;
    if (!PyArg_ParseTuple(args, "sLLOOO|p", &name, &rows, &cols, &o[0], &o[1], &o[2], &csc) || ready(self))
        return NULL;
    long long lines = csc ? cols : rows;   /* indptr's extent */
    Held *h = PyMem_RawCalloc(1, sizeof *h);
    if (!h) return PyErr_NoMemory();
    for (; h->n < 3; h->n++)
        if (PyObject_GetBuffer(o[h->n], &h->b[h->n], PyBUF_FORMAT | PyBUF_C_CONTIGUOUS)) { held_release(h); return NULL; }
    int pb = index_bits(&h->b[0]), ib = index_bits(&h->b[1]);
    Py_ssize_t np = pb ? h->b[0].len / h->b[0].itemsize : 0, ni = ib ? h->b[1].len / h->b[1].itemsize : 0;
    int64_t nnz = lines >= 0 && np == lines + 1
                      ? (pb == 64 ? ((int64_t *)h->b[0].buf)[lines] : ((int32_t *)h->b[0].buf)[lines]) : 0;
    const char *bad = !pb ? "indptr must be int32 or int64"
                    : !ib ? "indices must be int32 or int64"
                    : !is_double(&h->b[2]) ? "values must be float64"
                    : lines < 0 || np != lines + 1 ? (csc ? "indptr must have cols+1 entries"
                                                          : "indptr must have rows+1 entries")
                    : nnz < 0 || ni < nnz || h->b[2].len / 8 < nnz ? "indices and values need indptr[-1] entries"
                    : NULL;
    if (bad) {
        held_release(h);
        PyErr_Format(PyExc_ValueError, "input '%s': %s", name, bad);
        return NULL;
    }
    if ((csc ? braid_bind_csc : braid_bind_csr)(self->s, name, rows, cols, h->b[0].buf, pb, h->b[1].buf, ib,
                                                h->b[2].buf, held_release, h))
        return fail_script(self);
    Py_RETURN_NONE;
}

/* Column j of bind_frame: c[j] and the buffer or string array behind
 * it (released by frame_free). */
typedef struct FrameIn {
    Py_ssize_t n;
    BraidColumn *c;
    Py_buffer *b;        /* numeric columns' buffers (obj NULL if unused) */
    const char **s;      /* string columns' cells, column after column */
    PyObject **keep;     /* the string columns' sequences */
} FrameIn;

static void frame_in_free(FrameIn *f)
{
    for (Py_ssize_t j = 0; j < f->n; j++) {
        if (f->b && f->b[j].obj) PyBuffer_Release(&f->b[j]);
        if (f->keep) Py_XDECREF(f->keep[j]);
    }
    PyMem_Free(f->c);
    PyMem_Free(f->b);
    PyMem_Free(f->s);
    PyMem_Free(f->keep);
}

/* Reads column j = (name, kind, data) of rows cells; kind "f8", "i8",
 * "bool" (a C-contiguous buffer of float64 / int64 / uint8) or "str" (a
 * sequence of str or None). */
static int frame_in_column(FrameIn *f, Py_ssize_t j, PyObject *col, int64_t rows)
{
    PyObject *nm, *data;
    const char *kind;
    if (!PyArg_ParseTuple(col, "OsO", &nm, &kind, &data)) return -1;
    BraidColumn *c = &f->c[j];
    c->name = nm == Py_None ? NULL : PyUnicode_AsUTF8(nm);
    if (nm != Py_None && !c->name) return -1;
    if (!strcmp(kind, "str")) {
        c->type = BRAID_COL_STRING;
        if (!(f->keep[j] = PySequence_Fast(data, "a str column must be a sequence"))) return -1;
        if (PySequence_Fast_GET_SIZE(f->keep[j]) != rows) goto length;
        const char **cells = f->s + j * rows;
        for (int64_t i = 0; i < rows; i++) {
            PyObject *o = PySequence_Fast_GET_ITEM(f->keep[j], i);
            if (o != Py_None && !(cells[i] = PyUnicode_AsUTF8(o))) return -1;
        }
        c->data = cells;
        return 0;
    }
    int size = !strcmp(kind, "f8") || !strcmp(kind, "i8") ? 8 : !strcmp(kind, "bool") ? 1 : 0;
    if (!size) { PyErr_Format(PyExc_ValueError, "unknown column kind '%s'", kind); return -1; }
    c->type = kind[0] == 'f' ? BRAID_COL_DOUBLE : kind[0] == 'i' ? BRAID_COL_INT : BRAID_COL_BOOL;
    if (PyObject_GetBuffer(data, &f->b[j], PyBUF_C_CONTIGUOUS)) return -1;
    if (f->b[j].itemsize != size) {
        PyErr_Format(PyExc_TypeError, "a %s column needs %d-byte items", kind, size);
        return -1;
    }
    if (f->b[j].len / size != rows) goto length;
    c->data = f->b[j].buf;
    return 0;
length:
    PyErr_Format(PyExc_ValueError, "frame column %zd does not have %lld cells", j, (long long)rows);
    return -1;
}

/* Reads the columns (a sequence of (name or None, kind, data), as
 * frame_in_column reads them) of a frame of rows rows into f; free f
 * with frame_in_free also when it fails (-1 with a Python error set). */
static int frame_in_read(FrameIn *f, PyObject *cols, long long rows)
{
    memset(f, 0, sizeof *f);
    if (rows < 0) { PyErr_SetString(PyExc_ValueError, "negative rows"); return -1; }
    PyObject *seq = PySequence_Fast(cols, "columns must be a sequence");
    if (!seq) return -1;
    f->n = PySequence_Fast_GET_SIZE(seq);
    size_t n = (size_t)(f->n ? f->n : 1);
    f->c = PyMem_Calloc(n, sizeof *f->c);
    f->b = PyMem_Calloc(n, sizeof *f->b);
    f->keep = PyMem_Calloc(n, sizeof *f->keep);
    f->s = PyMem_Calloc(n * (size_t)(rows ? rows : 1), sizeof *f->s);
    int rc = -1;
    if (!f->c || !f->b || !f->keep || !f->s) PyErr_NoMemory();
    else {
        Py_ssize_t j = 0;
        while (j < f->n && !frame_in_column(f, j, PySequence_Fast_GET_ITEM(seq, j), rows)) j++;
        rc = j == f->n ? 0 : -1;
    }
    Py_DECREF(seq);
    return rc;
}

/* bind_frame(name, rows, columns): a frame (copied) from columns of
 * (name or None, kind, data) as frame_in_column reads them. */
static PyObject *script_bind_frame(Script *self, PyObject *args)
{
    const char *name;
    long long rows;
    PyObject *cols;
    if (!PyArg_ParseTuple(args, "sLO", &name, &rows, &cols) || ready(self)) return NULL;
    FrameIn f;
    int rc = frame_in_read(&f, cols, rows);
    if (!rc && braid_bind_frame(self->s, name, rows, f.c, (int)f.n)) {
        fail_script(self);
        rc = -1;
    }
    frame_in_free(&f);
    if (rc) return NULL;
    Py_RETURN_NONE;
}

/* Appends (name, kind, value) items to l; kinds "matrix" (a C-contiguous
 * 2-D float64 buffer, copied), "double", "int", "str", "frame" (rows,
 * columns as bind_frame takes them; copied), "list" (a sequence of items,
 * recursively). */
static int list_fill(BraidList *l, PyObject *items)
{
    PyObject *seq = PySequence_Fast(items, "list items must be a sequence");
    if (!seq) return -1;
    int rc = 0;
    for (Py_ssize_t i = 0; !rc && i < PySequence_Fast_GET_SIZE(seq); i++) {
        PyObject *nm, *v;
        const char *kind, *name = NULL;
        rc = -1;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, i), "OsO", &nm, &kind, &v)) break;
        if (nm != Py_None && !(name = PyUnicode_AsUTF8(nm))) break;
        if (!strcmp(kind, "double")) rc = braid_list_append_double(l, name, PyFloat_AsDouble(v));
        else if (!strcmp(kind, "int")) rc = braid_list_append_int(l, name, PyLong_AsLongLong(v));
        else if (!strcmp(kind, "str")) {
            const char *t = PyUnicode_AsUTF8(v);
            rc = t ? braid_list_append_string(l, name, t) : -1;
        } else if (!strcmp(kind, "list")) {
            BraidList *sub = braid_list_new();
            rc = !sub || list_fill(sub, v) || braid_list_append_list(l, name, sub) ? -1 : 0;
            braid_list_free(sub);
        } else if (!strcmp(kind, "frame")) {
            long long rows;
            PyObject *cols;
            FrameIn f;
            if (!PyArg_ParseTuple(v, "LO", &rows, &cols)) break;
            if (!frame_in_read(&f, cols, rows)) rc = braid_list_append_frame(l, name, rows, f.c, (int)f.n);
            frame_in_free(&f);
        } else if (!strcmp(kind, "matrix")) {
            Py_buffer b;
            if (PyObject_GetBuffer(v, &b, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT)) break;
            if (b.ndim == 2 && is_double(&b))
                rc = braid_list_append_matrix(l, name, b.buf, b.shape[0], b.shape[1]);
            else
                PyErr_SetString(PyExc_TypeError, "a list's matrix must be a 2-D float64 buffer");
            PyBuffer_Release(&b);
        } else
            PyErr_Format(PyExc_ValueError, "unknown list item kind '%s'", kind);
        if (PyErr_Occurred()) rc = -1;   /* a number that did not convert */
        else if (rc) PyErr_Format(BraidError, "cannot append list item %zd", i + 1);
    }
    Py_DECREF(seq);
    return rc;
}

/* bind_list(name, items): a DML list from (name, kind, value) items
 * (list_fill). */
static PyObject *script_bind_list(Script *self, PyObject *args)
{
    const char *name;
    PyObject *items;
    if (!PyArg_ParseTuple(args, "sO", &name, &items) || ready(self)) return NULL;
    BraidList *l = braid_list_new();
    if (!l) return PyErr_NoMemory();
    int rc = list_fill(l, items);
    if (!rc && braid_bind_list(self->s, name, l)) {
        braid_list_free(l);
        return fail_script(self);
    }
    braid_list_free(l);
    if (rc) return NULL;
    Py_RETURN_NONE;
}

/* execute(): runs the script with the GIL released. */
static PyObject *script_execute(Script *self, PyObject *unused)
{
    if (ready(self)) return NULL;
    int rc;
    self->busy = 1;
    Py_BEGIN_ALLOW_THREADS
    rc = braid_execute(self->s);
    Py_END_ALLOW_THREADS
    self->busy = 0;
    if (rc) return fail_script(self);
    Py_RETURN_NONE;
}

static PyObject *script_executing(Script *self, void *unused) { return PyBool_FromLong(self->busy); }

static PyTypeObject MatrixType;

typedef struct {
    PyObject_HEAD
    BraidMatrix m;
} Matrix;

/* A frame output: keeps braid's reference while its column buffers live. */
typedef struct {
    PyObject_HEAD
    BraidFrame f;
} Frame;

static PyTypeObject FrameType;
static PyObject *part_new(PyObject *owner, void *ptr, Py_ssize_t n, char *format, int itemsize, int readonly);

/* One column as (name, kind, values): numbers as a read-only buffer over
 * braid's column, strings as a list (None: missing). */
static PyObject *frame_column(Frame *fr, const BraidColumn *c)
{
    static char *kinds[] = {[BRAID_COL_STRING] = "str", [BRAID_COL_DOUBLE] = "f8", [BRAID_COL_INT] = "i8",
                            [BRAID_COL_BOOL] = "bool"};
    static char *formats[] = {[BRAID_COL_DOUBLE] = "d", [BRAID_COL_INT] = "q", [BRAID_COL_BOOL] = "B"};
    static int sizes[] = {[BRAID_COL_DOUBLE] = 8, [BRAID_COL_INT] = 8, [BRAID_COL_BOOL] = 1};
    PyObject *vals;
    if (c->type == BRAID_COL_STRING) {
        const char *const *s = c->data;
        vals = PyList_New((Py_ssize_t)fr->f.rows);
        for (int64_t i = 0; vals && i < fr->f.rows; i++) {
            PyObject *t = s[i] ? PyUnicode_FromString(s[i]) : Py_NewRef(Py_None);
            if (!t) { Py_CLEAR(vals); break; }
            PyList_SET_ITEM(vals, i, t);
        }
    } else
        vals = part_new((PyObject *)fr, (void *)c->data, (Py_ssize_t)fr->f.rows, formats[c->type], sizes[c->type], 1);
    return vals ? Py_BuildValue("(ssN)", c->name, kinds[c->type], vals) : NULL;
}

/* A frame view as a list of columns (frame_column); the view is taken
 * over (freed when the last column buffer goes). */
static PyObject *frame_columns(BraidFrame *f)
{
    Frame *fr = PyObject_New(Frame, &FrameType);
    if (!fr) {
        braid_frame_free(f);
        return NULL;
    }
    fr->f = *f;
    PyObject *cols = PyList_New((Py_ssize_t)fr->f.cols);
    for (int64_t j = 0; cols && j < fr->f.cols; j++) {
        PyObject *c = frame_column(fr, &fr->f.columns[j]);
        if (!c) { Py_CLEAR(cols); break; }
        PyList_SET_ITEM(cols, j, c);
    }
    Py_DECREF(fr);
    return cols;
}

/* A frame output as a list of columns. */
static PyObject *frame_output(Script *self, const char *name)
{
    BraidFrame f;
    return braid_get_frame_view(self->s, name, &f) ? fail_script(self) : frame_columns(&f);
}

static PyObject *matrix_new(BraidMatrix *m);

/* Item i of list l as a Python value (list_output for nested lists). */
static PyObject *list_output(const BraidList *l, int dense);

static PyObject *list_item(const BraidList *l, int64_t i, int dense)
{
    double d;
    int64_t n;
    char *str;
    BraidMatrix m;
    BraidList *sub;
    BraidFrame f;
    PyObject *r = NULL;
    switch (braid_list_kind(l, i)) {
    case BRAID_DOUBLE: return braid_list_get_double(l, i, &d) ? NULL : PyFloat_FromDouble(d);
    case BRAID_INT: return braid_list_get_int(l, i, &n) ? NULL : PyLong_FromLongLong(n);
    case BRAID_BOOL: return braid_list_get_int(l, i, &n) ? NULL : PyBool_FromLong((long)n);
    case BRAID_STRING:
        if (braid_list_get_string(l, i, &str)) return PyErr_NoMemory();
        r = PyUnicode_FromString(str);
        braid_free(str);
        return r;
    case BRAID_MATRIX:
        if (braid_list_get_matrix_view(l, i, dense, &m)) return PyErr_NoMemory();
        return matrix_new(&m);
    case BRAID_LIST:
        if (braid_list_get_list(l, i, &sub)) return PyErr_NoMemory();
        r = list_output(sub, dense);
        braid_list_free(sub);
        return r;
    case BRAID_FRAME:
        if (braid_list_get_frame_view(l, i, &f)) return PyErr_NoMemory();
        return frame_columns(&f);
    default:
        PyErr_Format(BraidError, "list item %lld: a kind of value braid cannot return", (long long)i + 1);
        return NULL;
    }
}

/* A list as a tuple of (name or None, value) pairs. */
static PyObject *list_output(const BraidList *l, int dense)
{
    int64_t n = braid_list_length(l);
    PyObject *t = PyTuple_New((Py_ssize_t)n);
    for (int64_t i = 0; t && i < n; i++) {
        const char *nm = braid_list_name(l, i);
        PyObject *v = list_item(l, i, dense);
        PyObject *pair = v ? Py_BuildValue("(zN)", nm, v) : NULL;
        if (!pair) { Py_CLEAR(t); break; }
        PyTuple_SET_ITEM(t, i, pair);
    }
    return t;
}

/* get(name, dense=True): a scalar output as a Python scalar, a matrix as a
 * Matrix (dense=False: braid's own format, CSR when sparse), a frame as a
 * list of columns (frame_output), a list as a tuple of pairs
 * (list_output). */
static PyObject *script_get(Script *self, PyObject *args)
{
    const char *name;
    int dense = 1;
    if (!PyArg_ParseTuple(args, "s|p", &name, &dense) || ready(self)) return NULL;
    double d;
    int64_t i;
    char *str;
    switch (braid_output_kind(self->s, name)) {
    case BRAID_DOUBLE: return braid_get_double(self->s, name, &d) ? fail_script(self) : PyFloat_FromDouble(d);
    case BRAID_INT: return braid_get_int(self->s, name, &i) ? fail_script(self) : PyLong_FromLongLong(i);
    case BRAID_BOOL: return braid_get_int(self->s, name, &i) ? fail_script(self) : PyBool_FromLong((long)i);
    case BRAID_STRING:
        if (braid_get_string(self->s, name, &str)) return fail_script(self);
        PyObject *r = PyUnicode_FromString(str);
        braid_free(str);
        return r;
    case BRAID_MATRIX: {
        BraidMatrix m;
        return braid_get_matrix_view(self->s, name, dense, &m) ? fail_script(self) : matrix_new(&m);
    }
    case BRAID_LIST: {
        BraidList *l;
        if (braid_get_list(self->s, name, &l)) return fail_script(self);
        PyObject *r = list_output(l, dense);
        braid_list_free(l);
        return r;
    }
    case BRAID_FRAME: return frame_output(self, name);
    case BRAID_NONE:
        PyErr_Format(BraidError, "output '%s' was not assigned (or is not a declared output)", name);
        return NULL;
    default:
        PyErr_Format(BraidError, "output '%s': a value of a kind braid cannot return", name);
        return NULL;
    }
}

/* explain(kind="hops"): the compiled plan as text. */
static PyObject *script_explain(Script *self, PyObject *args)
{
    const char *kind = "hops";
    char *text;
    if (!PyArg_ParseTuple(args, "|s", &kind) || ready(self)) return NULL;
    if (braid_explain(self->s, kind, &text)) return fail_script(self);
    PyObject *r = PyUnicode_FromString(text);
    braid_free(text);
    return r;
}

/* trace_recompile(on): record the recompiled DAGs of the next runs. */
static PyObject *script_trace(Script *self, PyObject *arg)
{
    int on = PyObject_IsTrue(arg);
    if (on < 0 || ready(self)) return NULL;
    braid_trace_recompile(self->s, on);
    Py_RETURN_NONE;
}

static PyObject *script_capture(Script *self, PyObject *arg)
{
    int on = PyObject_IsTrue(arg);
    if (on < 0 || ready(self)) return NULL;
    braid_capture_output(self->s, on);
    Py_RETURN_NONE;
}

static PyObject *script_output(Script *self, PyObject *unused)
{
    if (ready(self)) return NULL;
    return PyUnicode_DecodeUTF8(braid_output(self->s), (Py_ssize_t)strlen(braid_output(self->s)), "replace");
}

/* compressed_linalg(mode): sysds.compressed.linalg ("true", "false",
 * "auto") for the next runs; recompiles the script when it changes. */
static PyObject *script_compressed_linalg(Script *self, PyObject *arg)
{
    const char *mode = PyUnicode_AsUTF8(arg);
    if (!mode || ready(self)) return NULL;
    if (braid_set_compressed_linalg(self->s, mode)) return fail_script(self);
    Py_RETURN_NONE;
}

/* count_loops(on): loop statistics for the next runs (braid_count_loops). */
static PyObject *script_count_loops(Script *self, PyObject *arg)
{
    int on = PyObject_IsTrue(arg);
    if (on < 0 || ready(self)) return NULL;
    braid_count_loops(self->s, on);
    Py_RETURN_NONE;
}

/* loops(): the last run's loop statistics as dicts (braid_loops). */
static PyObject *script_loops(Script *self, PyObject *unused)
{
    if (ready(self)) return NULL;
    const BraidLoop *l;
    int n = braid_loops(self->s, &l);
    PyObject *list = PyList_New(n);
    for (int i = 0; list && i < n; i++) {
        PyObject *d = Py_BuildValue("{s:s,s:i,s:i,s:L,s:L,s:L}", "file", l[i].file, "line", l[i].line, "col",
                                    l[i].col, "entries", (long long)l[i].entries, "iterations",
                                    (long long)l[i].iterations, "max_iterations", (long long)l[i].max_iterations);
        if (!d) { Py_DECREF(list); return NULL; }
        PyList_SET_ITEM(list, i, d);
    }
    return list;
}

static PyMethodDef script_methods[] = {
    {"compressed_linalg", (PyCFunction)script_compressed_linalg, METH_O,
     "compressed_linalg(mode): sysds.compressed.linalg 'true', 'false' or 'auto' for the next runs"},
    {"count_loops", (PyCFunction)script_count_loops, METH_O,
     "count_loops(on): count the loops' iterations in the next runs (loops())"},
    {"loops", (PyCFunction)script_loops, METH_NOARGS,
     "loops(): the last run's loops: [{file, line, col, entries, iterations, max_iterations}]"},
    {"capture_output", (PyCFunction)script_capture, METH_O,
     "capture_output(on): collect what the next runs print instead of writing to stdout"},
    {"output", (PyCFunction)script_output, METH_NOARGS, "output(): what the last run printed (capture_output)"},
    {"trace_recompile", (PyCFunction)script_trace, METH_O,
     "trace_recompile(on): record the DAGs recompiled by the next runs (explain('recompile_hops'))"},
    {"explain", (PyCFunction)script_explain, METH_VARARGS,
     "explain(kind='hops'|'runtime'|'dot'|'dot_all'|'recompile_hops'|'recompile_dot'): the plan as text"},
    {"bind", (PyCFunction)script_bind, METH_VARARGS, "bind(name, value): bind a declared input"},
    {"bind_csr", (PyCFunction)script_bind_csr, METH_VARARGS,
     "bind_csr(name, rows, cols, indptr, indices, values, csc=False): bind a CSR (or CSC) matrix"},
    {"bind_frame", (PyCFunction)script_bind_frame, METH_VARARGS,
     "bind_frame(name, rows, [(name, 'f8'|'i8'|'bool'|'str', data), ...]): bind a frame"},
    {"bind_list", (PyCFunction)script_bind_list, METH_VARARGS,
     "bind_list(name, [(name, 'matrix'|'double'|'int'|'str'|'list', value), ...]): bind a list"},
    {"execute", (PyCFunction)script_execute, METH_NOARGS, "execute(): run (the GIL released)"},
    {"get", (PyCFunction)script_get, METH_VARARGS, "get(name, dense=True): an output of the last run"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef script_getset[] = {
    {"executing", (getter)script_executing, NULL, "an execute() is running", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject ScriptType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "braid._braid.Script",
    .tp_doc = "A prepared DML script (braid_prepare).",
    .tp_basicsize = sizeof(Script),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)script_init,
    .tp_dealloc = (destructor)script_dealloc,
    .tp_methods = script_methods,
    .tp_getset = script_getset,
};

/* ---- Matrix and Part ---- */

static void matrix_dealloc(Matrix *self)
{
    braid_matrix_free(&self->m);
    PyObject_Free(self);
}

/* A dense Matrix is a rows x cols C-contiguous float64 buffer. */
static int matrix_getbuffer(Matrix *self, Py_buffer *v, int flags)
{
    if (self->m.sparse) {
        PyErr_SetString(PyExc_BufferError, "a sparse matrix: use part('indptr'|'indices'|'values')");
        return -1;
    }
    static double empty;
    Py_ssize_t *shape = PyMem_Malloc(4 * sizeof *shape);
    if (!shape) { PyErr_NoMemory(); return -1; }
    if (PyBuffer_FillInfo(v, (PyObject *)self, self->m.data ? self->m.data : &empty,
                          (Py_ssize_t)(self->m.rows * self->m.cols * 8), !self->m.writable, flags)) {
        PyMem_Free(shape);
        return -1;
    }
    v->ndim = 2;
    v->format = (flags & PyBUF_FORMAT) ? "d" : NULL;
    v->itemsize = 8;
    shape[0] = (Py_ssize_t)self->m.rows;
    shape[1] = (Py_ssize_t)self->m.cols;
    shape[2] = shape[1] * 8;
    shape[3] = 8;
    v->shape = (flags & PyBUF_ND) == PyBUF_ND ? shape : NULL;
    v->strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? shape + 2 : NULL;
    v->internal = shape;
    return 0;
}

static void matrix_releasebuffer(Matrix *self, Py_buffer *v) { PyMem_Free(v->internal); }

static PyBufferProcs matrix_buffer = {(getbufferproc)matrix_getbuffer, (releasebufferproc)matrix_releasebuffer};

static PyObject *matrix_shape(Matrix *self, void *u) { return Py_BuildValue("(LL)", self->m.rows, self->m.cols); }
static PyObject *matrix_sparse(Matrix *self, void *u) { return PyBool_FromLong(self->m.sparse); }
static PyObject *matrix_writable(Matrix *self, void *u) { return PyBool_FromLong(self->m.writable); }
static PyObject *matrix_nnz(Matrix *self, void *u) { return PyLong_FromLongLong(self->m.nnz); }
static PyObject *matrix_address(Matrix *self, void *u)
{
    return PyLong_FromVoidPtr(self->m.sparse ? (void *)self->m.values : (void *)self->m.data);
}

typedef struct {
    PyObject_HEAD
    PyObject *owner;     /* the Matrix or Frame holding braid's reference */
    void *ptr;
    Py_ssize_t n;
    char *format;
    int itemsize;
    int readonly;
} Part;

static PyTypeObject PartType;

/* A 1-D buffer of n items over ptr, keeping owner alive. */
static PyObject *part_new(PyObject *owner, void *ptr, Py_ssize_t n, char *format, int itemsize, int readonly)
{
    Part *p = PyObject_New(Part, &PartType);
    if (!p) return NULL;
    Py_INCREF(owner);
    p->owner = owner;
    p->ptr = ptr;
    p->n = n;
    p->format = format;
    p->itemsize = itemsize;
    p->readonly = readonly;
    return (PyObject *)p;
}

/* part(name): one CSR array of a sparse Matrix as a 1-D buffer. */
static PyObject *matrix_part(Matrix *self, PyObject *args)
{
    const char *which;
    if (!PyArg_ParseTuple(args, "s", &which)) return NULL;
    if (!self->m.sparse) { PyErr_SetString(PyExc_ValueError, "a dense matrix has no CSR parts"); return NULL; }
    PyObject *o = (PyObject *)self;
    int ro = !self->m.writable;
    if (!strcmp(which, "indptr")) return part_new(o, self->m.indptr, self->m.rows + 1, "q", 8, ro);
    if (!strcmp(which, "indices")) return part_new(o, self->m.indices, self->m.nnz, "i", 4, ro);
    if (!strcmp(which, "values")) return part_new(o, self->m.values, self->m.nnz, "d", 8, ro);
    PyErr_Format(PyExc_ValueError, "no CSR part '%s'", which);
    return NULL;
}

static PyGetSetDef matrix_getset[] = {
    {"shape", (getter)matrix_shape, NULL, "(rows, cols)", NULL},
    {"sparse", (getter)matrix_sparse, NULL, "CSR (else dense row-major)", NULL},
    {"writable", (getter)matrix_writable, NULL, "braid shares the storage with nothing else", NULL},
    {"nnz", (getter)matrix_nnz, NULL, "non-zeros", NULL},
    {"address", (getter)matrix_address, NULL, "address of the values (for zero-copy checks)", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef matrix_methods[] = {
    {"part", (PyCFunction)matrix_part, METH_VARARGS, "part('indptr'|'indices'|'values'): a CSR array"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject MatrixType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "braid._braid.Matrix",
    .tp_doc = "A matrix output: braid's storage, exported without a copy.",
    .tp_basicsize = sizeof(Matrix),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = (destructor)matrix_dealloc,
    .tp_as_buffer = &matrix_buffer,
    .tp_getset = matrix_getset,
    .tp_methods = matrix_methods,
};

/* A Matrix owning view m (freed on failure). */
static PyObject *matrix_new(BraidMatrix *m)
{
    Matrix *o = PyObject_New(Matrix, &MatrixType);
    if (!o) { braid_matrix_free(m); return NULL; }
    o->m = *m;
    return (PyObject *)o;
}

static void part_dealloc(Part *self)
{
    Py_DECREF(self->owner);
    PyObject_Free(self);
}

static int part_getbuffer(Part *self, Py_buffer *v, int flags)
{
    static int64_t empty;
    if (PyBuffer_FillInfo(v, (PyObject *)self, self->ptr ? self->ptr : &empty, self->n * self->itemsize,
                          self->readonly, flags))
        return -1;
    v->format = (flags & PyBUF_FORMAT) ? self->format : NULL;
    v->itemsize = self->itemsize;
    v->shape = (flags & PyBUF_ND) == PyBUF_ND ? &self->n : NULL;
    v->strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? &v->itemsize : NULL;
    return 0;
}

static PyBufferProcs part_buffer = {(getbufferproc)part_getbuffer, NULL};

static PyTypeObject PartType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "braid._braid.Part",
    .tp_doc = "One array of a Matrix (CSR) or Frame (a numeric column).",
    .tp_basicsize = sizeof(Part),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = (destructor)part_dealloc,
    .tp_as_buffer = &part_buffer,
};

static void frame_dealloc(Frame *self)
{
    braid_frame_free(&self->f);
    PyObject_Free(self);
}

static PyTypeObject FrameType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "braid._braid.Frame",
    .tp_doc = "A frame output's storage (kept alive by its column buffers).",
    .tp_basicsize = sizeof(Frame),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = (destructor)frame_dealloc,
};

/* ---- module ---- */

static PyObject *set_threads(PyObject *m, PyObject *arg)
{
    long n = PyLong_AsLong(arg);
    if (n == -1 && PyErr_Occurred()) return NULL;
    braid_set_threads((int)n);
    Py_RETURN_NONE;
}

/* set_home(path or None): braid_set_home (the package's __init__ calls it
 * once at import, when the package carries its own library). */
static PyObject *set_home(PyObject *m, PyObject *arg)
{
    const char *dir = arg == Py_None ? NULL : PyUnicode_AsUTF8(arg);
    if (!dir && arg != Py_None) return NULL;
    braid_set_home(dir);
    Py_RETURN_NONE;
}

/* builtin_names(): the names DML resolves as builtins, sorted. */
static PyObject *builtin_names(PyObject *m, PyObject *unused)
{
    char **names;
    int n;
    if (braid_builtin_names(&names, &n)) return PyErr_NoMemory();
    PyObject *r = PyList_New(n);
    for (int i = 0; i < n; i++) {
        PyObject *s = r ? PyUnicode_FromString(names[i]) : NULL;
        if (s) PyList_SET_ITEM(r, i, s);
        else Py_CLEAR(r);
        braid_free(names[i]);
    }
    braid_free(names);
    return r;
}

/* A signature's parameters as a list of (name, type, value type, default
 * or None). */
static PyObject *params_list(const BraidParam *p, int n)
{
    PyObject *r = PyList_New(n);
    for (int i = 0; r && i < n; i++) {
        PyObject *t = Py_BuildValue("(sssz)", p[i].name, p[i].type, p[i].value_type, p[i].deflt);
        if (t) PyList_SET_ITEM(r, i, t);
        else Py_CLEAR(r);
    }
    return r;
}

/* builtin_signature(name): a dict with name, library, varargs, sidefx,
 * file, inputs and outputs (lists of (name, type, value type, default)). */
static PyObject *builtin_signature(PyObject *m, PyObject *arg)
{
    const char *name = PyUnicode_AsUTF8(arg);
    if (!name) return NULL;
    char *err = NULL;
    BraidSignature *s;
    Py_BEGIN_ALLOW_THREADS
    s = braid_builtin_signature(name, &err);   /* may parse a library file */
    Py_END_ALLOW_THREADS
    if (!s) {
        PyErr_SetString(BraidError, err ? err : "out of memory");
        braid_free(err);
        return NULL;
    }
    PyObject *r = Py_BuildValue("{s:s,s:O,s:O,s:O,s:z,s:N,s:N}", "name", s->name, "library",
                                s->library ? Py_True : Py_False, "varargs", s->varargs ? Py_True : Py_False,
                                "sidefx", s->sidefx ? Py_True : Py_False, "file", s->file,
                                "inputs", params_list(s->in, s->nin), "outputs", params_list(s->out, s->nout));
    braid_signature_free(s);
    return r;
}

static PyMethodDef module_methods[] = {
    {"builtin_names", builtin_names, METH_NOARGS, "builtin_names(): the builtin functions DML knows"},
    {"builtin_signature", builtin_signature, METH_O,
     "builtin_signature(name): {name, library, varargs, sidefx, file, inputs, outputs}"},
    {"set_threads", set_threads, METH_O, "set_threads(n): threads of braid's kernels (0: all cores)"},
    {"set_home", set_home, METH_O, "set_home(dir): the folder whose scripts/builtin is the library"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_braid", "braid's embedding API (see the braid package).", -1, module_methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__braid(void)
{
    if (PyType_Ready(&ScriptType) || PyType_Ready(&MatrixType) || PyType_Ready(&PartType) ||
        PyType_Ready(&FrameType))
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    BraidError = PyErr_NewException("braid.BraidError", PyExc_RuntimeError, NULL);
    if (PyModule_AddObjectRef(m, "BraidError", BraidError) || PyModule_AddObjectRef(m, "Script", (PyObject *)&ScriptType) ||
        PyModule_AddObjectRef(m, "Matrix", (PyObject *)&MatrixType)) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
