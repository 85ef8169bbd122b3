/* hdf5.c: matrices in HDF5 files, through the HDF5 library (Debian's
 * libhdf5, serial build), as SystemDS's format "hdf5" holds them: one
 * numeric dataset per matrix, named by read()/write()'s dataset= (default
 * "systemdsh5", SystemDS's FileFormatPropertiesHDF5). A dataset of dims
 * d0 x d1 x ... reads as d0 rows and d1 * d2 * ... columns in C order
 * (SystemDS's H5RootObject flattens the dimensions past the first), a
 * one-dimensional one as a column, a scalar one as 1 x 1; any integer or
 * floating-point element type converts to double (the library converts).
 * Chunked and compressed datasets read as well. A folder reads as its
 * part files' rows in name order (SystemDS's parallel writer splits large
 * matrices so). write() makes a new file with one contiguous 2-D
 * dataset of little-endian doubles (rows x cols), what SystemDS writes
 * and reads. The library is not thread-safe in this build: every call
 * holds one lock; its own error printing is off (errors come back as
 * BrErr naming the file and the dataset). */
#include "ioint.h"

#include <dlfcn.h>
#include <hdf5.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The library is loaded when a script first reads or writes an HDF5
 * file (dlopen by the soname the Makefile read from the library it
 * compiles against), not when braid starts: with its 35 libraries (curl,
 * TLS, Kerberos, LDAP) it took about 12 ms of every start of every
 * process, whether or not the script touched HDF5. The functions below
 * go through the pointers of h5 (the names stay the library's: the
 * macros after the table point them there; each is looked up by its own
 * name, #f, which the macros do not touch). */
#ifndef BRAID_HDF5_SONAME
#define BRAID_HDF5_SONAME "libhdf5_serial.so.103"
#endif
#define H5_FNS(X) \
    X(H5open) X(H5Eset_auto2) X(H5Oopen) X(H5Iget_type) X(H5Oclose) X(H5Sget_simple_extent_ndims) \
    X(H5Sget_simple_extent_dims) X(H5Fis_hdf5) X(H5Fopen) X(H5Lexists) X(H5Oexists_by_name) X(H5Dopen2) \
    X(H5Literate) X(H5Dget_type) X(H5Tget_class) X(H5Dget_space) X(H5Dread) X(H5Sclose) X(H5Tclose) \
    X(H5Dclose) X(H5Fclose) X(H5Fcreate) X(H5Screate_simple) X(H5Pcreate) X(H5Pset_create_intermediate_group) \
    X(H5Dcreate2) X(H5Dwrite) X(H5Pclose)
static struct {
    void *dl;
#define H5_PTR(f) __typeof__(f) *p_##f;
    H5_FNS(H5_PTR)
#undef H5_PTR
    hid_t *native_double, *ieee_f64le, *lcpl_cls;   /* the library's global ids */
} h5;
#define H5_CALL(f) (*h5.p_##f)
#undef H5open
#define H5open H5_CALL(H5open)
#define H5Eset_auto2 H5_CALL(H5Eset_auto2)
#define H5Oopen H5_CALL(H5Oopen)
#define H5Iget_type H5_CALL(H5Iget_type)
#define H5Oclose H5_CALL(H5Oclose)
#define H5Sget_simple_extent_ndims H5_CALL(H5Sget_simple_extent_ndims)
#define H5Sget_simple_extent_dims H5_CALL(H5Sget_simple_extent_dims)
#define H5Fis_hdf5 H5_CALL(H5Fis_hdf5)
#define H5Fopen H5_CALL(H5Fopen)
#define H5Lexists H5_CALL(H5Lexists)
#define H5Oexists_by_name H5_CALL(H5Oexists_by_name)
#define H5Dopen2 H5_CALL(H5Dopen2)
#undef H5Literate
#define H5Literate H5_CALL(H5Literate)
#define H5Dget_type H5_CALL(H5Dget_type)
#define H5Tget_class H5_CALL(H5Tget_class)
#define H5Dget_space H5_CALL(H5Dget_space)
#define H5Dread H5_CALL(H5Dread)
#define H5Sclose H5_CALL(H5Sclose)
#define H5Tclose H5_CALL(H5Tclose)
#define H5Dclose H5_CALL(H5Dclose)
#define H5Fclose H5_CALL(H5Fclose)
#define H5Fcreate H5_CALL(H5Fcreate)
#define H5Screate_simple H5_CALL(H5Screate_simple)
#define H5Pcreate H5_CALL(H5Pcreate)
#define H5Pset_create_intermediate_group H5_CALL(H5Pset_create_intermediate_group)
#define H5Dcreate2 H5_CALL(H5Dcreate2)
#define H5Dwrite H5_CALL(H5Dwrite)
#define H5Pclose H5_CALL(H5Pclose)
/* H5F_ACC_* check the headers' version against the library's: the
 * soname fixes the library's ABI */
#undef H5CHECK
#define H5CHECK
#undef H5T_NATIVE_DOUBLE
#define H5T_NATIVE_DOUBLE (*h5.native_double)
#undef H5T_IEEE_F64LE
#define H5T_IEEE_F64LE (*h5.ieee_f64le)
#undef H5P_LINK_CREATE
#define H5P_LINK_CREATE (*h5.lcpl_cls)

static pthread_mutex_t h5_lock = PTHREAD_MUTEX_INITIALIZER;

/* The library's file: BRAID_HDF5_LIB (another build of the same ABI),
 * else the soname. */
static const char *h5_lib(void)
{
    const char *v = getenv("BRAID_HDF5_LIB");
    return v && *v ? v : BRAID_HDF5_SONAME;
}

/* Loads the library once (under h5_lock); false when it is missing. */
static bool h5_load(void)
{
    if (h5.dl) return true;
    void *dl = dlopen(h5_lib(), RTLD_NOW | RTLD_LOCAL);
    if (!dl) return false;
    bool ok = true;
#define H5_SYM(f) ok = ok && (*(void **)&h5.p_##f = dlsym(dl, #f)) != NULL;
    H5_FNS(H5_SYM)
#undef H5_SYM
    ok = ok && (h5.native_double = dlsym(dl, "H5T_NATIVE_DOUBLE_g")) && (h5.ieee_f64le = dlsym(dl, "H5T_IEEE_F64LE_g")) &&
         (h5.lcpl_cls = dlsym(dl, "H5P_CLS_LINK_CREATE_ID_g"));
    /* the global ids are set when the library initializes */
    if (!ok || H5_CALL(H5open)() < 0) {
        dlclose(dl);
        memset(&h5, 0, sizeof h5);
        return false;
    }
    h5.dl = dl;
    return true;
}

/* Takes the lock and the library; on failure (the library is not
 * installed) an error naming path, and the lock is not held. */
static int h5_enter(const char *path, BrErr *e)
{
    pthread_mutex_lock(&h5_lock);
    if (!h5_load()) {
        pthread_mutex_unlock(&h5_lock);
        return br_err(e, BR_EIO, "%s: HDF5 files need the HDF5 library %s (Debian's libhdf5-103-1; BRAID_HDF5_LIB "
                      "names another), which could not be loaded", path, h5_lib());
    }
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    return 0;
}

static void h5_leave(void) { pthread_mutex_unlock(&h5_lock); }

const char *io_hdf5_default_dataset(void) { return "systemdsh5"; }

/* Up to max-1 bytes of the root group's dataset names, for a message. */
typedef struct { char *buf; size_t n, max; int count; } Names;

static herr_t add_name(hid_t g, const char *name, const H5L_info_t *info, void *arg)
{
    Names *ns = arg;
    hid_t ob = H5Oopen(g, name, H5P_DEFAULT);
    if (ob < 0) return 0;
    H5I_type_t ty = H5Iget_type(ob);
    H5Oclose(ob);
    if (ty != H5I_DATASET && ty != H5I_GROUP) return 0;
    int w = snprintf(ns->buf + ns->n, ns->max - ns->n, "%s%s%s", ns->count ? ", " : "", name,
                     ty == H5I_GROUP ? "/" : "");
    if (w < 0 || (size_t)w >= ns->max - ns->n) return 1;   /* full: stop */
    ns->n += (size_t)w;
    ns->count++;
    return 0;
}

/* The matrix shape of a dataspace: rows d0, columns the product of the
 * rest (1 for one dimension); false past int64. */
static bool shape_of(hid_t space, int64_t *rows, int64_t *cols)
{
    int rank = H5Sget_simple_extent_ndims(space);
    if (rank < 0 || rank > H5S_MAX_RANK) return false;
    hsize_t d[H5S_MAX_RANK];
    if (rank > 0 && H5Sget_simple_extent_dims(space, d, NULL) < 0) return false;
    double r = rank ? (double)d[0] : 1, c = 1;
    for (int k = 1; k < rank; k++) c *= (double)d[k];
    if (r * c > 9e18 || c > INT32_MAX) return false;
    *rows = (int64_t)r;
    *cols = (int64_t)c;
    return true;
}

/* Reads one file's dataset as a dense block (NULL with e set). */
static MB *read_file(const char *path, const char *dataset, BrErr *e)
{
    MB *m = NULL;
    hid_t f = -1, d = -1, s = -1, t = -1;
    htri_t is = H5Fis_hdf5(path);
    if (is <= 0) {
        br_err(e, BR_EIO, "read %s: not an HDF5 file", path);
        return NULL;
    }
    if ((f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT)) < 0) {
        br_err(e, BR_EIO, "read %s: cannot open the HDF5 file", path);
        return NULL;
    }
    htri_t there = H5Lexists(f, dataset, H5P_DEFAULT) > 0 ? H5Oexists_by_name(f, dataset, H5P_DEFAULT) : 0;
    if (there > 0) d = H5Dopen2(f, dataset, H5P_DEFAULT);
    if (d < 0) {
        char buf[400];
        Names ns = {buf, 0, sizeof buf, 0};
        buf[0] = 0;
        H5Literate(f, H5_INDEX_NAME, H5_ITER_INC, NULL, add_name, &ns);
        br_err(e, BR_EIO, "read %s: the HDF5 file has no dataset \"%s\" (give dataset=; its top level holds %s)", path,
               dataset, ns.count ? buf : "nothing");
        goto out;
    }
    t = H5Dget_type(d);
    H5T_class_t cls = t < 0 ? H5T_NO_CLASS : H5Tget_class(t);
    if (cls != H5T_INTEGER && cls != H5T_FLOAT) {
        br_err(e, BR_EIO, "read %s: dataset \"%s\" holds %s, not numbers", path, dataset,
               cls == H5T_STRING ? "strings" : cls == H5T_COMPOUND ? "records (a compound type)" : "values of another kind");
        goto out;
    }
    int64_t rows, cols;
    s = H5Dget_space(d);
    if (s < 0 || !shape_of(s, &rows, &cols)) {
        br_err(e, BR_EIO, "read %s: dataset \"%s\" has no shape braid can hold as a matrix", path, dataset);
        goto out;
    }
    if (io_check_mem(path, rows, cols, rows * cols, e)) goto out;
    if (!(m = mb_dense_uninit(rows, cols, e))) goto out;
    if (rows * cols > 0 && H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, m->d) < 0) {
        br_err(e, BR_EIO, "read %s: cannot read dataset \"%s\" (a filter this library lacks, or a damaged file)",
               path, dataset);
        mb_release(m);
        m = NULL;
    }
out:
    if (s >= 0) H5Sclose(s);
    if (t >= 0) H5Tclose(t);
    if (d >= 0) H5Dclose(d);
    if (f >= 0) H5Fclose(f);
    return m;
}

/* Stacks blocks (all dense, the same number of columns) by rows. */
static MB *stack_rows(MB **parts, int n, const char *path, BrErr *e)
{
    int64_t rows = 0, cols = n ? parts[0]->cols : 0;
    for (int k = 0; k < n; k++) {
        if (parts[k]->cols != cols) {
            br_err(e, BR_EDIM, "read %s: its part files' datasets have %lld and %lld columns", path, (long long)cols,
                   (long long)parts[k]->cols);
            return NULL;
        }
        rows += parts[k]->rows;
    }
    MB *m = mb_dense_uninit(rows, cols, e);
    if (!m) return NULL;
    int64_t at = 0;
    for (int k = 0; k < n; k++) {
        memcpy(m->d + at * cols, parts[k]->d, (size_t)(parts[k]->rows * cols) * sizeof(double));
        at += parts[k]->rows;
    }
    return m;
}

MB *io_read_hdf5(const char *path, const char *dataset, int64_t rows, int64_t cols, BrErr *e)
{
    if (!dataset) dataset = io_hdf5_default_dataset();
    struct stat st;
    bool dir = stat(path, &st) == 0 && S_ISDIR(st.st_mode);
    MB *m = NULL;
    if (!dir) {
        if (h5_enter(path, e)) return NULL;
        m = read_file(path, dataset, e);
        h5_leave();
    } else {
        char **files = NULL;
        int n = io_list_parts(path, &files, e);
        if (n < 0) return NULL;
        MB **parts = br_calloc((size_t)(n > 0 ? n : 1), sizeof *parts);
        int k = 0;
        if (!parts) br_err(e, BR_ENOMEM, "out of memory reading %s", path);
        else if (n == 0) br_err(e, BR_EIO, "read %s: the folder holds no part files", path);
        if (!e->code && !h5_enter(path, e)) {
            for (k = 0; parts && k < n && !e->code; k++) parts[k] = read_file(files[k], dataset, e);
            h5_leave();
        }
        if (!e->code) m = stack_rows(parts, n, path, e);
        for (int q = 0; parts && q < n; q++) mb_release(parts[q]);
        for (int q = 0; q < n; q++) free(files[q]);
        free(files);
        free(parts);
    }
    if (!m) return NULL;
    if ((rows >= 0 && rows != m->rows) || (cols >= 0 && cols != m->cols)) {
        br_err(e, BR_EDIM, "read %s: dataset \"%s\" is %lldx%lld, the read or its .mtd says %lldx%lld "
               "(dimension mismatch)", path, dataset, (long long)m->rows, (long long)m->cols, (long long)rows,
               (long long)cols);
        mb_release(m);
        return NULL;
    }
    mb_recount_nnz(m);
    return mb_finish(m, e);
}

int io_write_hdf5(IoOut *o, const MB *mb, const char *dataset, BrErr *e)
{
    if (!dataset) dataset = io_hdf5_default_dataset();
    if (mb->rows == 0 || mb->cols == 0)
        return br_err(e, BR_EARG, "write %s: an HDF5 matrix needs rows and columns (got %lldx%lld; SystemDS "
                      "writes none either)", o->path, (long long)mb->rows, (long long)mb->cols);
    if (!dataset[0]) return br_err(e, BR_EARG, "write %s: an empty dataset name", o->path);
    MB *dense = NULL;
    const double *v = mb->d;
    if (mb->sparse) {
        if (!(dense = mb_to_dense(mb, e))) return e->code;
        v = dense->d;
    }
    if (h5_enter(o->path, e)) {
        mb_release(dense);
        return e->code;
    }
    /* the temporary io_out_open made, truncated by the library (same
       file: the commit's fsync and rename act on what it wrote) */
    hid_t f = H5Fcreate(o->tmp, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hid_t s = -1, d = -1, lc = -1;
    if (f < 0) {
        br_err(e, BR_EIO, "cannot write %s: the HDF5 library cannot create the file", o->path);
        goto out;
    }
    hsize_t dims[2] = {(hsize_t)mb->rows, (hsize_t)mb->cols};
    s = H5Screate_simple(2, dims, NULL);
    /* a dataset name with '/' makes its groups */
    lc = H5Pcreate(H5P_LINK_CREATE);
    if (lc >= 0) H5Pset_create_intermediate_group(lc, 1);
    if (s >= 0) d = H5Dcreate2(f, dataset, H5T_IEEE_F64LE, s, lc, H5P_DEFAULT, H5P_DEFAULT);
    if (d < 0) {
        br_err(e, BR_EIO, "cannot write %s: the HDF5 library cannot create dataset \"%s\"", o->path, dataset);
        goto out;
    }
    if (H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0)
        br_err(e, BR_EIO, "cannot write %s: writing dataset \"%s\" failed", o->path, dataset);
out:
    if (lc >= 0) H5Pclose(lc);
    if (d >= 0) H5Dclose(d);
    if (s >= 0) H5Sclose(s);
    if (f >= 0 && H5Fclose(f) < 0 && !e->code) br_err(e, BR_EIO, "cannot write %s: closing the HDF5 file failed", o->path);
    h5_leave();
    mb_release(dense);
    return e->code;
}
