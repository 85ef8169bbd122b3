/* config.c: the SystemDS-style XML configuration file (flat key/value). */
#include "config.h"
#include "../gpu/gpu.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void config_defaults(BraidConfig *c)
{
    memset(c, 0, sizeof *c);
    c->optlevel = 2;
    c->codegen = true;
    snprintf(c->codegen_optimizer, sizeof c->codegen_optimizer, "fuse_cost_based_v2");
    c->plancache = true;
    c->cg_async = true;
    c->threads = 0;
    snprintf(c->localtmpdir, sizeof c->localtmpdir, "/tmp/braid");
    c->blocksize = 1000;
    c->gpu_device = -1;
    c->piggyback = true;
    c->amulet_fuse = -1;
}

/* The line of position p in s (1-based), for messages. */
static int line_of(const char *s, const char *p)
{
    int line = 1;
    for (const char *q = s; q < p; q++) line += *q == '\n';
    return line;
}

/* Skips white space, <?...?> and <!-- ... -->; NULL at an unclosed one. */
static const char *skip_misc(const char *p)
{
    for (;;) {
        while (isspace((unsigned char)*p)) p++;
        if (!strncmp(p, "<?", 2)) { p = strstr(p, "?>"); if (!p) return NULL; p += 2; }
        else if (!strncmp(p, "<!--", 4)) { p = strstr(p, "-->"); if (!p) return NULL; p += 3; }
        else return p;
    }
}

/* Reads a tag name after '<' into key (letters, digits, . _ -); returns
 * the position after it or NULL. */
static const char *tag_name(const char *p, char *key, size_t n)
{
    size_t k = 0;
    while (isalnum((unsigned char)*p) || *p == '.' || *p == '_' || *p == '-') {
        if (k + 1 >= n) return NULL;
        key[k++] = *p++;
    }
    key[k] = 0;
    return k ? p : NULL;
}

static bool parse_bool(const char *v, bool *out)
{
    if (!strcasecmp(v, "true") || !strcmp(v, "1")) { *out = true; return true; }
    if (!strcasecmp(v, "false") || !strcmp(v, "0")) { *out = false; return true; }
    return false;
}

static bool parse_int(const char *v, long lo, long hi, int *out)
{
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (end == v || *end || errno || x < lo || x > hi) return false;
    *out = (int)x;
    return true;
}

/* Applies one <key>value</key>; false when the value is malformed. */
static bool apply_key(BraidConfig *c, const char *key, const char *v, char *unknown, size_t un)
{
    bool b;
    int n;
    if (!strcmp(key, "sysds.optlevel")) return parse_int(v, 0, 5, &c->optlevel);
    if (!strcmp(key, "sysds.codegen.enabled")) return parse_bool(v, &c->codegen);
    if (!strcmp(key, "sysds.codegen.plancache")) return parse_bool(v, &c->plancache);
    if (!strcmp(key, "sysds.codegen.async")) return parse_bool(v, &c->cg_async);
    if (!strcmp(key, "sysds.codegen.optimizer")) {
        if (!*v || strlen(v) >= sizeof c->codegen_optimizer) return false;
        snprintf(c->codegen_optimizer, sizeof c->codegen_optimizer, "%s", v);
        return true;
    }
    if (!strcmp(key, "sysds.cp.parallel.ops")) {
        if (!parse_bool(v, &b)) return false;
        c->threads = b ? 0 : 1;
        return true;
    }
    if (!strcmp(key, "sysds.num.threads")) {
        /* SystemDS: -1 (or 0) for all cores */
        if (!parse_int(v, -1, BR_MAX_THREADS, &n)) return false;
        c->threads = n < 0 ? 0 : n;
        return true;
    }
    if (!strcmp(key, "sysds.gpu")) {   /* braid: false, true or force */
        if (!strcmp(v, "force")) { c->gpu = 2; return true; }
        if (!parse_bool(v, &b)) return false;
        c->gpu = b;
        return true;
    }
    if (!strcmp(key, "sysds.gpu.device")) return parse_int(v, -1, 1023, &c->gpu_device);
    if (!strcmp(key, "sysds.gpu.stitch")) {   /* braid: stitched regions under -gpu (default true) */
        if (!parse_bool(v, &b)) return false;
        c->gpu_nostitch = !b;
        return true;
    }
    if (!strcmp(key, "sysds.gpu.async")) {   /* braid: stitched kernels compile in the background */
        if (!parse_bool(v, &b)) return false;
        c->gpu_async = b;
        return true;
    }
    if (!strcmp(key, "sysds.gpu.profile")) {   /* braid: "launch_s bw xfer_bw [sync_s copy_bw down_bw]" */
        GpuProfile p;
        if (strlen(v) >= sizeof c->gpu_profile || !gpu_profile_parse(v, &p)) return false;
        snprintf(c->gpu_profile, sizeof c->gpu_profile, "%s", v);
        return true;
    }
    if (!strcmp(key, "sysds.gpu.memory.budget")) {   /* bytes of device buffers, 0 = half the device */
        char *end;
        errno = 0;
        double d = strtod(v, &end);
        if (end == v || *end || errno || !(d >= 0) || d > 1e18) return false;
        c->gpu_budget = d;
        return true;
    }
    if (!strcmp(key, "sysds.local.memory.budget")) {   /* braid: bytes, 0 = 70% of RAM */
        char *end;
        errno = 0;
        double d = strtod(v, &end);
        if (end == v || *end || errno || !(d >= 0)) return false;
        c->mem_budget = d;
        return true;
    }
    if (!strcmp(key, "sysds.defaultblocksize")) {   /* rows per block of distributed matrices */
        char *end;
        errno = 0;
        long long b = strtoll(v, &end, 10);
        if (end == v || *end || errno || b < 1) return false;
        c->blocksize = b;
        return true;
    }
    if (!strcmp(key, "sysds.dist.piggyback")) return parse_bool(v, &c->piggyback);
    if (!strcmp(key, "sysds.amulet.fuse")) {   /* braid: cost (true), force, or false (0) */
        if (!strcmp(v, "force")) { c->amulet_fuse = 2; return true; }
        if (!strcmp(v, "cost")) { c->amulet_fuse = 1; return true; }
        if (!parse_bool(v, &b)) return false;
        c->amulet_fuse = b;
        return true;
    }
    if (!strcmp(key, "sysds.dist.netrate")) {   /* braid: bytes/s between ranks, 0 = measured */
        char *end;
        errno = 0;
        double d = strtod(v, &end);
        if (end == v || *end || errno || !(d >= 0) || isinf(d)) return false;
        c->net_rate = d;
        return true;
    }
    if (!strcmp(key, "sysds.compressed.linalg")) {   /* true, false or auto */
        if (!strcasecmp(v, "auto")) { c->cla = 2; return true; }
        if (!parse_bool(v, &b)) return false;
        c->cla = b ? 1 : 0;
        return true;
    }
    if (!strcmp(key, "sysds.localtmpdir")) {
        if (!*v || strlen(v) >= sizeof c->localtmpdir) return false;
        snprintf(c->localtmpdir, sizeof c->localtmpdir, "%s", v);
        return true;
    }
    if (strlen(unknown) + strlen(key) + 3 < un) {
        if (unknown[0]) strcat(unknown, ", ");
        strcat(unknown, key);
    }
    return true;
}

/* Parses <root> <key>value</key> ... </root>: anything else (text
 * outside elements, nesting, a closing tag that does not match, a value
 * of the wrong kind) is an error naming the line. */
static int parse_config(const char *path, const char *s, BraidConfig *c, BrErr *e)
{
    char unknown[1024] = "", root[128], key[128], close[128], val[512];
    const char *p = skip_misc(s);
    if (p && *p == '<' && (p = tag_name(p + 1, root, sizeof root))) p = skip_misc(p);
    if (!p || *p != '>')
        return br_err(e, BR_EARG, "%s:%d: malformed configuration: expected a root element such as <root>", path,
                      line_of(s, p ? p : s));
    p++;
    for (;;) {
        const char *at = skip_misc(p);
        if (!at || *at != '<')
            return br_err(e, BR_EARG, "%s:%d: malformed configuration: expected <key>value</key> or </%s>", path,
                          line_of(s, at ? at : p), root);
        if (at[1] == '/') {
            const char *q = tag_name(at + 2, close, sizeof close);
            if (!q || strcmp(close, root) || *q != '>' || *(skip_misc(q + 1) ? skip_misc(q + 1) : "x"))
                return br_err(e, BR_EARG, "%s:%d: malformed configuration: expected </%s> at the end", path,
                              line_of(s, at), root);
            break;
        }
        const char *q = tag_name(at + 1, key, sizeof key);
        if (!q || *q != '>')
            return br_err(e, BR_EARG, "%s:%d: malformed configuration: bad tag", path, line_of(s, at));
        const char *end = strchr(q + 1, '<');
        size_t vl = end ? (size_t)(end - q - 1) : 0;
        const char *r = end && end[1] == '/' ? tag_name(end + 2, close, sizeof close) : NULL;
        if (!r || strcmp(close, key) || *r != '>' || vl >= sizeof val)
            return br_err(e, BR_EARG, "%s:%d: malformed configuration: <%s> is not closed by </%s>", path,
                          line_of(s, at), key, key);
        memcpy(val, q + 1, vl);
        val[vl] = 0;
        char *v = val;
        while (isspace((unsigned char)*v)) v++;
        for (char *t = v + strlen(v); t > v && isspace((unsigned char)t[-1]); ) *--t = 0;
        if (!apply_key(c, key, v, unknown, sizeof unknown))
            return br_err(e, BR_EARG, "%s:%d: bad value \"%s\" for %s", path, line_of(s, at), v, key);
        p = r + 1;
    }
    if (unknown[0]) fprintf(stderr, "braid: warning: %s: ignoring configuration keys braid does not implement: %s\n", path, unknown);
    return 0;
}

int config_read(const char *path, BraidConfig *c, BrErr *e)
{
    FILE *f = fopen(path, "r");
    if (!f) return br_err(e, BR_EIO, "cannot open config file %s", path);
    char *s = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n + 4096 > cap) {
            char *ns = realloc(s, cap = cap ? 2 * cap : 8192);
            if (!ns || cap > ((size_t)1 << 24)) {
                free(ns ? ns : s);
                fclose(f);
                if (!ns) return br_err(e, BR_ENOMEM, "cannot read config file %s: out of memory", path);
                return br_err(e, BR_EARG, "cannot read config file %s: too large", path);
            }
            s = ns;
        }
        size_t r = fread(s + n, 1, cap - n - 1, f);
        n += r;
        if (r == 0) break;
    }
    bool err = ferror(f);
    fclose(f);
    if (err) { free(s); return br_err(e, BR_EIO, "cannot read config file %s", path); }
    s[n] = 0;
    if (strlen(s) != n) { free(s); return br_err(e, BR_EARG, "%s: malformed configuration: a NUL byte", path); }
    int rc = parse_config(path, s, c, e);
    free(s);
    return rc;
}
