/* distio.c: parallel reads of csv and text matrix files (every rank
 * parses its share of the lines, io_share_load, and the rows then move
 * to the ranks that hold them) and parallel writes (every rank writes its
 * rows as a part file of a folder committed with one .mtd). */
#include "distint.h"

#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* What every rank needs of a read() (sent as a string value). */
typedef struct ReadSpec {
    int32_t csv, header, fill, libsvm;
    double fill_value;
    int64_t rows, cols;   /* -1: unknown */
    char sep[8];
    int32_t n_na, mm;     /* mm: a Matrix Market file */
    char na[256];         /* csv naStrings, each ended by a NUL */
    IoMmHead head;        /* mm: its header (rank 0 read it) */
} ReadSpec;
#define MAX_NA 16

/* What every rank needs of a write(). */
typedef struct WriteSpec {
    char format[16];
    int64_t blocksize;         /* binary: SystemDS's block side */
    char sep[8], ind_sep[8];   /* ind_sep: libsvm's */
    int32_t header, pad;
} WriteSpec;

/* Rank 0's values broadcast to all (path, spec). */
static bool bcast_pair(Value *bv, Value *a, Value *b, BrErr *e)
{
    *a = g_rank == 0 ? val_retain(bv[0]) : val_none();
    *b = g_rank == 0 ? val_retain(bv[1]) : val_none();
    bool ok = !bcast_value(a, e) && !bcast_value(b, e);
    return ok && a->kind == V_STRING && b->kind == V_STRING;
}

/* The column count of a csv file whose .mtd does not give it: the first
 * data line in rank order, else the header, else none. */
static int64_t csv_cols(const IoShare *sh, const IoCsvOpts *co)
{
    int64_t mine[2], *all = malloc((size_t)g_size * 2 * sizeof *all);
    io_csv_share_cols(sh, co, &mine[0], &mine[1]);
    if (!all) { fprintf(stderr, "braid: rank %d: out of memory\n", g_rank); MPI_Abort(MPI_COMM_WORLD, 1); }
    MPI_Allgather(mine, 2, MPI_INT64_T, all, 2, MPI_INT64_T, MPI_COMM_WORLD);
    int64_t cols = -1;
    for (int r = 0; r < g_size && cols < 0; r++) cols = all[2 * r];
    if (cols < 0) cols = all[1] >= 0 ? all[1] : 0;
    free(all);
    return cols;
}

/* Every rank's parsed rows (mine: its share's, in file order; NULL when
 * parsing failed) to the ranks that hold them; the row count checked. */
static int place_rows(const char *path, const ReadSpec *rs, MB *mine, int64_t cols, Job *jj, MB **part, BrErr *e)
{
    if (agree(!mine, e)) return -1;
    int64_t n = mine->rows, off = 0, total = 0;
    MPI_Exscan(&n, &off, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    if (g_rank == 0) off = 0;
    MPI_Allreduce(&n, &total, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    bool bad = g_rank == 0 && rs->rows >= 0 && rs->rows != total && !(cols == 0 && total == 0);
    if (bad)
        br_err(e, BR_EDIM, "%s: expected %lld rows (from the .mtd or read() arguments), found %lld (dimension "
               "mismatch)", path, (long long)rs->rows, (long long)total);
    if (agree(bad, e)) { mb_release(mine); return -1; }
    if (cols == 0 && rs->rows > 0) total = rs->rows;   /* an n x 0 matrix */
    jj->rows = total;
    jj->ocols = cols;
    Piece pc = {off, mine};
    int rc = redistribute(&pc, n > 0, total, part, e);
    mb_release(mine);
    return agree(rc != 0, e);
}

/* csv: this rank's share parsed, then its rows moved to their ranks. */
static int read_csv(const char *path, const ReadSpec *rs, const IoShare *sh, int64_t base_line, Job *jj, MB **part,
                    BrErr *e)
{
    const char *na[MAX_NA];
    const char *q = rs->na;
    for (int i = 0; i < rs->n_na && i < MAX_NA; i++, q += strlen(q) + 1) na[i] = q;
    IoCsvOpts co = {rs->header != 0, rs->sep, rs->fill != 0, rs->fill_value, na, BR_MIN(rs->n_na, MAX_NA), 0};
    int64_t cols = rs->cols >= 0 ? rs->cols : csv_cols(sh, &co);
    MB *mine = io_csv_share_parse(path, sh, cols, &co, base_line, e);
    return place_rows(path, rs, mine, cols, jj, part, e);
}

/* libsvm: this rank's share parsed (the columns, when no .mtd gives them,
 * from the largest index of all shares), its rows moved to their ranks. */
static int read_libsvm(const char *path, const ReadSpec *rs, const IoShare *sh, int64_t base_line, Job *jj, MB **part,
                       BrErr *e)
{
    int64_t cols = rs->cols;
    if (cols < 0) {
        int64_t mx = io_libsvm_share_maxidx(sh), all = 0;
        MPI_Allreduce(&mx, &all, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
        cols = all + 1;
    }
    MB *mine = io_libsvm_share_parse(path, sh, cols, base_line, e);
    return place_rows(path, rs, mine, cols, jj, part, e);
}

/* A symmetric (sym 1) or skew-symmetric (2) mm file's cells with each
 * off-diagonal cell followed by its mirror, as the local reader lays
 * them out (so later duplicates win alike). false: out of memory. */
static bool mirror(IoTriples *t, int sym)
{
    int64_t n = t->n;
    for (int64_t x = 0; x < t->n; x++) n += t->r[x] != t->c[x];
    IoTriples m = {malloc((size_t)(n ? n : 1) * 8), malloc((size_t)(n ? n : 1) * 4), malloc((size_t)(n ? n : 1) * 8),
                   0, t->maxr, t->maxc};
    if (!m.r || !m.c || !m.v) { io_triples_free(&m); return false; }
    for (int64_t x = 0; x < t->n; x++) {
        m.r[m.n] = t->r[x], m.c[m.n] = t->c[x], m.v[m.n++] = t->v[x];
        if (t->r[x] == t->c[x]) continue;
        m.r[m.n] = t->c[x], m.c[m.n] = (int32_t)t->r[x], m.v[m.n++] = sym == 2 ? -t->v[x] : t->v[x];
    }
    io_triples_free(t);
    *t = m;
    return true;
}

/* mm: this rank's entries, their count checked against the size line,
 * placed (the array layout: by their index in the file) and mirrored
 * when the file is symmetric. */
static bool mm_cells(const char *path, const ReadSpec *rs, const IoShare *sh, int64_t base_line, IoTriples *t,
                     BrErr *e)
{
    bool failed = io_mm_share_parse(path, sh, &rs->head, base_line, t, e) != 0;
    if (agree(failed, e)) return false;
    int64_t n = t->n, all = 0;
    MPI_Allreduce(&n, &all, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    failed = g_rank == 0 && io_mm_count_check(path, rs->head.entries, all, e);
    if (!rs->head.coord) {
        /* the array layout: this share's values are the entries after the
         * lower ranks' */
        int64_t first = 0;
        MPI_Exscan(&n, &first, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
        if (g_rank == 0) first = 0;
        if (!failed) io_mm_array_cells(&rs->head, first, t);
    }
    if (!failed && rs->head.sym && !mirror(t, rs->head.sym)) failed = true, br_err(e, BR_ENOMEM, "out of memory reading %s", path);
    if (!agree(failed, e)) return true;
    io_triples_free(t);
    return false;
}

/* text and mm: this rank's cells, sent to the ranks that hold their rows. */
static int read_text(const char *path, const ReadSpec *rs, const IoShare *sh, int64_t base_line, Job *jj, MB **part,
                     BrErr *e)
{
    IoTriples t;
    if (rs->mm) {
        if (!mm_cells(path, rs, sh, base_line, &t, e)) return -1;
    } else if (agree(io_text_share_parse(path, sh, rs->rows, rs->cols, base_line, &t, e) != 0, e)) {
        return -1;
    }
    bool failed = false;
    int64_t mx[2] = {t.maxr, t.maxc}, all[2];
    MPI_Allreduce(mx, all, 2, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
    int64_t rows = rs->rows >= 0 ? rs->rows : all[0], cols = rs->cols >= 0 ? rs->cols : all[1];
    /* the cells by the rank holding their row, each in file order */
    size_t N = (size_t)g_size, rec = 8 + 4 + 8;
    char **send = calloc(N, sizeof *send), **recv = calloc(N, sizeof *recv);
    size_t *slen = calloc(N, sizeof *slen), *rlen = calloc(N, sizeof *rlen), *fill = calloc(N, sizeof *fill);
    int64_t *lo = calloc(N + 1, sizeof *lo);
    if (!send || !recv || !slen || !rlen || !fill || !lo) {
        fprintf(stderr, "braid: rank %d: out of memory reading %s\n", g_rank, path);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int r = 0; r < g_size; r++) {
        int64_t hi;
        part_range(rows, r, &lo[r], &hi);
        lo[r + 1] = hi;
    }
    int *owner = malloc((size_t)(t.n ? t.n : 1) * sizeof *owner);
    failed = !owner;
    for (int64_t x = 0; !failed && x < t.n; x++) {
        int r = 0;
        while (r < g_size - 1 && t.r[x] >= lo[r + 1]) r++;
        owner[x] = r;
        slen[r] += rec;
    }
    for (int r = 0; !failed && r < g_size; r++)
        if (slen[r] && !(send[r] = malloc(slen[r]))) failed = true;
    for (int64_t x = 0; !failed && x < t.n; x++) {
        char *p = send[owner[x]] + fill[owner[x]];
        memcpy(p, &t.r[x], 8);
        memcpy(p + 8, &t.c[x], 4);
        memcpy(p + 12, &t.v[x], 8);
        fill[owner[x]] += rec;
    }
    if (failed) {
        for (int r = 0; r < g_size; r++) slen[r] = 0;
        br_err(e, BR_ENOMEM, "out of memory reading %s", path);
    }
    io_triples_free(&t);
    free(owner);
    exchange(send, slen, recv, rlen);
    int64_t mlo, mhi;
    part_range(rows, g_rank, &mlo, &mhi);
    IoTriples in = {0};
    int64_t n = 0;
    for (int s = 0; s < g_size; s++) n += (int64_t)(rlen[s] / rec);
    in.r = malloc((size_t)(n ? n : 1) * 8);
    in.c = malloc((size_t)(n ? n : 1) * 4);
    in.v = malloc((size_t)(n ? n : 1) * 8);
    if (!failed && (!in.r || !in.c || !in.v)) failed = true, br_err(e, BR_ENOMEM, "out of memory reading %s", path);
    for (int s = 0; !failed && s < g_size; s++)   /* source order keeps the file order */
        for (size_t o = 0; o < rlen[s]; o += rec, in.n++) {
            memcpy(&in.r[in.n], recv[s] + o, 8);
            memcpy(&in.c[in.n], recv[s] + o + 8, 4);
            memcpy(&in.v[in.n], recv[s] + o + 12, 8);
            in.r[in.n] -= mlo;
        }
    if (!failed && mhi > mlo) failed = !(*part = io_triples_block(path, &in, mhi - mlo, cols, e));
    io_triples_free(&in);
    for (int r = 0; r < g_size; r++) free(send[r]), free(recv[r]);
    free(send), free(recv), free(slen), free(rlen), free(fill), free(lo);
    jj->rows = rows;
    jj->ocols = cols;
    return agree(failed, e);
}

int run_readt(const Job *j, Value *bv, Value *res, BrErr *e)
{
    Value path, spec;
    bool failed = !bcast_pair(bv, &path, &spec, e);
    ReadSpec rs;
    if (!failed) memcpy(&rs, spec.s->s, sizeof rs);
    IoShare sh = {0};
    if (!failed) failed = io_share_load_from(path.s->s, rs.mm ? rs.head.off : 0, g_rank, g_size, &sh, e) != 0;
    int rc = -1;
    if (!agree(failed, e)) {
        int64_t lines = sh.lines, base = 0;
        MPI_Exscan(&lines, &base, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
        if (g_rank == 0) base = 0;
        if (rs.mm) base += rs.head.lines;
        Job jj = *j;
        MB *part = NULL;
        rc = rs.csv ? read_csv(path.s->s, &rs, &sh, base, &jj, &part, e)
           : rs.libsvm ? read_libsvm(path.s->s, &rs, &sh, base, &jj, &part, e)
                       : read_text(path.s->s, &rs, &sh, base, &jj, &part, e);
        io_share_free(&sh);
        if (!rc && part && mb_examine(part, e)) { mb_release(part); part = NULL; }   /* agreed in finish_map */
        Value loc = part ? val_matrix(part) : val_none();
        if (!rc) rc = finish_map(&jj, &loc, res, e);
        val_release(&loc);
    }
    io_share_free(&sh);
    val_release(&path);
    val_release(&spec);
    return rc;
}

/* An mm file's header (read by rank 0, its errors the local reader's;
 * a folder's in its first part, as a distributed write puts it). */
static int mm_spec(const char *path, const IoReadPlan *p, ReadSpec *rs, BrErr *e)
{
    struct stat st;
    if (stat(path, &st) || !(S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))) return DIST_LOCAL;
    BrErr he = {0};
    if (io_mm_head(path, p->rows, p->cols, &rs->head, &he)) {
        /* a folder whose first part does not hold the header: the local
         * reader reads it (or says what is wrong) */
        if (S_ISDIR(st.st_mode)) return DIST_LOCAL;
        *e = he;
        return -1;
    }
    rs->mm = 1;
    rs->rows = rs->head.rows;
    rs->cols = rs->head.cols;
    return 0;
}

int dist_read_text(Value *path, const IoReadPlan *p, Value *out, BrErr *e)
{
    bool csv = !strcmp(p->format, "csv"), libsvm = !strcmp(p->format, "libsvm"), mm = !strcmp(p->format, "mm");
    if (path->kind != V_STRING || (!csv && !libsvm && !mm && strcmp(p->format, "text")) || (csv && p->csv.n_na > MAX_NA) ||
        (csv && (!p->csv.sep || !p->csv.sep[0] || strlen(p->csv.sep) >= sizeof ((ReadSpec *)0)->sep)))
        return DIST_LOCAL;
    ReadSpec rs = {.csv = csv, .libsvm = libsvm, .header = p->csv.header, .fill = p->csv.fill, .fill_value = p->csv.fill_value,
                   .rows = p->rows, .cols = p->cols};
    if (csv) snprintf(rs.sep, sizeof rs.sep, "%s", p->csv.sep);
    int mrc = mm ? mm_spec(path->s->s, p, &rs, e) : 0;
    if (mrc) return mrc;
    /* naStrings travel packed in the spec (more than it holds: read by rank 0) */
    size_t used = 0;
    for (int i = 0; csv && i < p->csv.n_na; i++) {
        size_t l = strlen(p->csv.na[i]) + 1;
        if (used + l > sizeof rs.na) return DIST_LOCAL;
        memcpy(rs.na + used, p->csv.na[i], l);
        used += l;
        rs.n_na++;
    }
    Value bv[3] = {val_retain(*path), val_string_n((const char *)&rs, sizeof rs), val_none()};
    Job j = {.type = J_READT};
    pthread_mutex_lock(&g_lock);
    j.out = g_next_id++;
    int rc = start_job(&j, NULL, bv, out, e);
    pthread_mutex_unlock(&g_lock);
    val_release(&bv[0]);
    val_release(&bv[1]);
    /* a .mtd nnz that disagrees with the data: as the local reader says */
    if (!rc && p->nnz >= 0 && out->dm->nnz != p->nnz) {
        br_err(e, BR_EIO, "read %s: %s.mtd says nnz %lld, the data holds %lld non-zeros", path->s->s, path->s->s,
               (long long)p->nnz, (long long)out->dm->nnz);
        val_release(out);
        return -1;
    }
    return rc;
}

int run_write(const Job *j, Value *bv, BrErr *e)
{
    Value dir, spec;
    bool failed = !bcast_pair(bv, &dir, &spec, e);
    WriteSpec ws;
    if (!failed) memcpy(&ws, spec.s->s, sizeof ws);
    MB *m = part_get(j->id[0]);
    int64_t lo, hi;
    part_range(j->rows, g_rank, &lo, &hi);
    IoWriteOpts o = {.format = ws.format, .header = ws.header != 0, .sep = ws.sep, .ind_sep = ws.ind_sep,
                     .blocksize = ws.blocksize};
    /* part 0 always exists: it carries a csv or mm header */
    MB *none = !failed && !m && g_rank == 0 ? mb_empty(0, j->cols, e) : NULL;
    const MB *w = m ? m : none;
    /* mm: the header counts the entries every part writes */
    int64_t whole[3] = {j->rows, j->cols, 0}, mine = m ? m->nnz : 0;
    MPI_Allreduce(&mine, &whole[2], 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    if (!failed && w) failed = io_parts_write(dir.s->s, g_rank, w, lo, whole, &o, e) != 0;
    mb_release(none);
    val_release(&dir);
    val_release(&spec);
    return agree(failed, e);
}

int dist_write(Value *x, const char *path, const IoWriteOpts *o, BrErr *e)
{
    const char *fmt = o->format ? o->format : "text";
    bool libsvm = !strcmp(fmt, "libsvm");
    const char *sep = o->sep ? o->sep : libsvm ? " " : ",", *isep = o->ind_sep ? o->ind_sep : ":";
    if (x->kind != V_DIST || !io_parts_format(fmt) || !sep[0] || strlen(sep) >= sizeof ((WriteSpec *)0)->sep ||
        strlen(isep) >= sizeof ((WriteSpec *)0)->ind_sep)
        return DIST_LOCAL;
    /* SystemDS's binary blocks: each rank's rows start on their grid */
    int64_t bs = o->blocksize > 0 ? o->blocksize : br_blocksize();
    WriteSpec ws = {.header = o->header, .blocksize = bs};
    snprintf(ws.format, sizeof ws.format, "%s", fmt);
    snprintf(ws.sep, sizeof ws.sep, "%s", sep);
    snprintf(ws.ind_sep, sizeof ws.ind_sep, "%s", isep);
    char *dir = io_parts_begin(path, e);
    if (!dir) return -1;
    const DM *d = x->dm;
    Value bv[3] = {val_string(dir), val_string_n((const char *)&ws, sizeof ws), val_none()};
    Job j = {.type = J_WRITE, .nin = 1, .kind = {A_DIST}, .id = {d->id}, .rows = d->rows, .cols = d->cols};
    pthread_mutex_lock(&g_lock);
    int rc = start_job(&j, NULL, bv, NULL, e);
    pthread_mutex_unlock(&g_lock);
    val_release(&bv[0]);
    val_release(&bv[1]);
    IoWriteOpts wo = {.format = fmt, .header = o->header, .sep = sep, .ind_sep = isep, .blocksize = bs};
    if (!rc) rc = io_parts_commit(dir, path, d->rows, d->cols, d->nnz, &wo, e) ? -1 : 0;
    else io_parts_abort(dir);
    free(dir);
    return rc;
}
