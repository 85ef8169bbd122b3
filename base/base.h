/* base.h: what every stage of braid uses: error values, allocation,
 * thread settings and timers. No module-level mutable state here except the
 * process-wide thread count (set once by the CLI or the embedding API). */
#ifndef BRAID_BASE_H
#define BRAID_BASE_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <sys/types.h>

/* A position in a source file. file points to a string that outlives the
 * Span's users (the AST keeps it in its arena; a Diag copies it). */
typedef struct Span {
    const char *file;   /* path as given; NULL: no file */
    int line, col;      /* 1-based; line 0: no position in the file */
} Span;

/* braid's one error value, from compile time (base/diag.h keeps a list of
 * them) to run time: a code, where in the script (at; zero when not
 * known) and a message. Functions that can fail take a BrErr * and return
 * a non-zero code (or NULL) after br_err() filled it. The first message
 * wins: later br_err() calls on an already-set error keep the original
 * text. */
typedef struct BrErr {
    int code;          /* 0: no error */
    Span at;           /* the script position, when known */
    char msg[1024];
} BrErr;

enum { BR_OK = 0, BR_EFAIL = 1, BR_ENOMEM = 2, BR_EIO = 3, BR_EDIM = 4,
       BR_EINDEX = 5, BR_EARG = 6 };

/* Sets e (if not already set) from a printf format; returns code. */
int br_err(BrErr *e, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static inline void br_err_clear(BrErr *e) { e->code = 0; e->at = (Span){0}; e->msg[0] = 0; }

/* Allocation. br_malloc/br_calloc return NULL on failure (callers report
 * BR_ENOMEM). br_alloc_aligned returns 64-byte-aligned memory freed with
 * br_free_aligned. Sizes are checked for overflow. */
void *br_malloc(size_t n);
void *br_calloc(size_t n, size_t size);
void *br_realloc(void *p, size_t n);
void *br_alloc_aligned(size_t n);          /* uninitialised */
/* Allocation-failure injection of plain malloc/calloc/realloc (the raw
 * mode of BRAID_FAIL_ALLOC; cli/main.c's link-time wrappers ask it). */
bool br_alloc_fail_raw(void);
/* The same injection armed from inside a process, around one part of
 * braid (tests: test_amulet's where-loop kernel calls), so that only
 * that part's allocations count (br_* wrappers and pool takes, every
 * thread): from now on the nth allocation fails (n > 0, once), none
 * fails but they are counted (n == 0), or the injection is off (n < 0);
 * no line is printed when one fails. Returns the allocations counted
 * since the last call (or since BRAID_FAIL_ALLOC's start). */
long br_alloc_fail_arm(long n);
void *br_calloc_aligned(size_t n);         /* zeroed */
void br_free_aligned(void *p);
/* p (from br_alloc_aligned, or NULL) with room for n bytes: p itself when
 * its block already holds n, else a new block holding p's first `keep`
 * bytes, p freed. NULL on failure, p then untouched. */
void *br_realloc_aligned(void *p, size_t keep, size_t n);
char *br_strdup(const char *s);
/* Buffer pools (docs/DESIGN.md "Buffer pools"). A library must not set
 * the host process's malloc thresholds (mallopt), so braid keeps its own
 * large freed blocks for reuse: a pool belongs to one runtime context
 * (runtime/interp.c: made by rt_init, freed by rt_destroy) and is bound to
 * the threads that run it (the run's thread, parfor and paramserv
 * workers). While a pool is bound, br_alloc_aligned serves blocks of at
 * least 128 KB from its size classes and br_free_aligned keeps them, up
 * to the pool's byte cap (the classes used longest ago give theirs back
 * first; a block above half the cap is never kept). Kept blocks are not
 * zeroed: br_calloc_aligned clears what it hands out. Thread-safe; under
 * AddressSanitizer kept blocks are poisoned. Unbound threads allocate and
 * free as before. */
typedef struct BrPool BrPool;
typedef struct BrPoolStats {
    size_t bytes, cap, peak;        /* kept now, the cap, the most kept */
    int64_t hits, misses;           /* takes served from the pool or not */
    int64_t kept, dropped;          /* frees kept; kept blocks freed */
    int64_t gathered;               /* misses served from other classes' blocks */
} BrPoolStats;
/* The default cap of a context's pool: BR_POOL_CAP, or BRAID_POOL_MB
 * (megabytes; 0 turns pooling off). */
#define BR_POOL_CAP ((size_t)1 << 30)
size_t br_pool_default_cap(void);
/* Blocks of a pool's size classes (from 128 KB) that no pool served,
 * and their bytes, since the process started: their new pages cost a
 * fault each (about 2-3 ms per MB on this project's VM, docs/DESIGN.md
 * "Buffer pools"); -stats prints them. */
void br_fresh_counts(int64_t *blocks, int64_t *bytes);
/* Blocks of at least 1 MB that a pool's miss made of the pages of blocks
 * it kept in other size classes (moved, not copied), and their bytes. */
void br_gathered_counts(int64_t *blocks, int64_t *bytes);
BrPool *br_pool_new(size_t cap);     /* NULL without memory */
void br_pool_free(BrPool *p);        /* frees every kept block; unbound */
/* Binds p (or NULL) to this thread; returns the previous binding. */
BrPool *br_pool_bind(BrPool *p);
BrPool *br_pool_current(void);
void br_pool_stats(BrPool *p, BrPoolStats *s);
/* The process's reserve: blocks of at least 128 KB that a pool gives up
 * at its end (br_pool_free) or that a thread with no pool frees go to
 * one more pool, made at the first use and never bound; a pool's miss
 * (or an unbound allocation) takes from it before allocating. So a
 * context's fresh pool, a host's next script and a kernel's team threads
 * reuse pages already faulted in (~13 us per fresh 4 KB page on this
 * VM). Its cap: a sixteenth of the physical memory, at least
 * BR_RESERVE_MIN and at most BR_RESERVE_CAP, or BRAID_RESERVE_MB
 * (megabytes; 0: no reserve, read at the first use). br_reserve_stats: its counters
 * (false and zeros without one). */
#define BR_RESERVE_CAP ((size_t)1 << 30)
#define BR_RESERVE_MIN ((size_t)256 << 20)
size_t br_reserve_default_cap(void);
bool br_reserve_stats(BrPoolStats *s);
/* Scratch of a kernel that a script may call many times (a where-loop
 * in a loop): br_alloc_aligned, but while a pool that keeps blocks is
 * bound, a block below the pool's smallest class (128 KB) gets that
 * class, so br_free_aligned keeps it and the next call takes it back
 * instead of allocating (unbound: as br_alloc_aligned). */
void *br_alloc_scratch(size_t n);
/* Doubles of a per-thread partial of n doubles, rounded up to whole
 * 128-byte pairs of cache lines: partials of parallel aggregates are laid
 * out at this stride (from a 64-byte-aligned block) so that no two share
 * a line (docs/DESIGN.md "Partials of parallel aggregates"). */
static inline size_t br_line_pairs(size_t n) { return (n + 15) / 16 * 16; }
/* size_t multiply with overflow detection; returns false on overflow. */
static inline bool br_mul_ok(size_t a, size_t b, size_t *out) {
    return !__builtin_mul_overflow(a, b, out);
}

/* Cleanup on a fatal signal (docs/DESIGN.md "Signals"): the CLI's
 * SIGTERM/SIGINT handler calls br_sig_cleanup, which kills the process
 * groups registered (running compiles: codegen/jit.c registers a group
 * at its start and unregisters it before reaping it, so the id is never
 * another process's) and removes the paths registered (temporaries of
 * writes being made, compile outputs and folders; a folder's files
 * first), with async-signal-safe calls only. A library never installs
 * the handler; a host may call br_sig_cleanup from its own. */
void br_sig_group_add(pid_t g);
void br_sig_group_del(pid_t g);
/* Returns a slot (> 0) for br_sig_path_del, 0 when the table is full. */
int br_sig_path_add(const char *path, bool dir);
void br_sig_path_del(int slot);
void br_sig_path_forget(const char *path);   /* by name */
/* A step that makes a registered path or group exist (creating a
 * temporary, spawning a compile) runs between br_sig_hold and
 * br_sig_release: br_sig_cleanup waits for the holds of other threads
 * before it cleans up, and a hold that starts during a cleanup waits
 * until it is over. Holds are short (a system call or a spawn). */
void br_sig_hold(void);
void br_sig_release(void);
void br_sig_cleanup(void);

/* Threads: the number of threads kernels use (default: all cores). */
int br_threads(void);
void br_set_threads(int n);       /* n <= 0: all cores; capped at BR_MAX_THREADS */
/* The most threads braid asks for (-threads, sysds.num.threads): libgomp
 * puts per-thread state on the stack, and 100000 threads overflow it. */
#define BR_MAX_THREADS 1024
/* Minimum work (cells) before a kernel goes parallel. */
#define BR_PAR_MIN 65536
/* The weight of an elementwise cell of `cost` (ops.def's cost column,
 * summed over a fused plan) in br_par's units and against task sizes,
 * at least 1: a cell of a few simple operations (cost 4) counts 1, one
 * of tanh or exp (cost 20) 5 (tanh over a 256 x 100 batch, 62 us on one
 * thread, then forks its team). */
static inline double br_cell_weight(double cost) { return cost > 4 ? cost / 4 : 1; }
/* Minimum work before a kernel forks a team while the machine is
 * crowded (br_par). */
#define BR_PAR_CROWDED_MIN (1 << 20)
/* Whether a kernel's parallel region over `work` cells forks a team:
 * work >= BR_PAR_MIN and more than one thread, and, while the machine is
 * crowded (more runnable tasks than cores beyond what braid's own teams
 * account for, /proc/loadavg looked at every 20 ms), work >=
 * BR_PAR_CROWDED_MIN: a region of a few hundred microseconds would wait a
 * scheduler time slice for its team's members (docs/perf.md). Kernels
 * that use it give the same results with any team size. BRAID_CROWDED=1
 * or 0 pins the crowded state (tests). Thread-safe. */
bool br_par(double work);
/* Counts since the start: regions br_par let fork, and regions it kept on
 * one thread because the machine was crowded (-stats). */
void br_par_counts(int64_t *teams, int64_t *crowded);
/* Pins the crowded state (1 or 0; -1: measured again), as BRAID_CROWDED
 * does (tests). */
void br_par_pin(int crowded);
/* Is the run queue too full for nt threads of the caller: more tasks
 * running now (/proc/stat procs_running, the caller included) than the
 * online processors leave for its other nt - 1 threads? False where the
 * count cannot be read. Cheap (one small read): the measurements of the
 * machine (codegen's machine file, the device profile) ask it before
 * and after measuring. */
bool br_queue_crowded(int nt);

/* The local memory budget (bytes): 70% of physical memory. Operations
 * whose least memory exceeds it run distributed (execution type EX_DIST). */
double br_mem_budget(void);
/* The physical limit behind it (70% of RAM), whatever the configured
 * budget: what rank 0 may collect of a distributed matrix. */
double br_mem_physical(void);
/* Sets the budget (bytes; <= 0: back to 70% of RAM). The configuration
 * key sysds.local.memory.budget sets it, so tests can force small budgets
 * and with them distributed operators. */
void br_set_mem_budget(double bytes);
/* Decimals to print a size of gb GB with ("%.*f GB"): one, or four under
 * 0.1 GB (a budget forced small by the configuration). */
static inline int br_gb_digits(double gb) { return gb >= 0.1 ? 1 : 4; }
/* The block size (sysds.defaultblocksize, > 0; 1000 unless set): rows of
 * a distributed matrix's blocks, and the block side of SystemDS's
 * binary-block files that write() makes. */
int64_t br_blocksize(void);
void br_set_blocksize(int64_t rows);
/* Execution types (seed 002, section 3.3): where an operation runs. */
enum { EX_CP = 0, EX_DIST = 1 };
/* Execution modes (SystemDS's -exec): hybrid picks per operation by the
 * budget; singlenode runs everything locally; distributed runs every
 * matrix operation that has a distributed operator distributed. */
typedef enum { BR_EXEC_HYBRID, BR_EXEC_SINGLENODE, BR_EXEC_DIST } BrExecMode;
BrExecMode br_exec_mode(void);
void br_set_exec_mode(BrExecMode m);
/* Distributed operators can run (launched under mpirun): set by the run
 * before compiling; plans keep EX_DIST operations out of fused operators
 * only then (without it they are errors and fusion may still avoid them). */
bool br_dist_available(void);
void br_set_dist_available(bool on);

/* Monotonic clock in nanoseconds. */
int64_t br_now_ns(void);

/* The per-user cache folder (docs/codegen.md, "Plan cache"; the GPU
 * profile's file, docs/gpu.md): want when given, else
 * $XDG_CACHE_HOME/braid, else ~/.cache/braid, into dir (n bytes);
 * created with mode 0700. True only when it is private: owned by the
 * user, writable by nobody else, reached through folders only root or
 * the user control (br_safe_folder), no symbolic link at the end. */
bool br_cache_dir(const char *want, char *dir, size_t n);
/* May a folder on the way to a cache be trusted (a stat of it): a real
 * folder owned by root or by us, writable by others only with the
 * sticky bit (/tmp)? */
struct stat;
bool br_safe_folder(const struct stat *st);

#define BR_MIN(a, b) ((a) < (b) ? (a) : (b))
#define BR_MAX(a, b) ((a) > (b) ? (a) : (b))

#endif
