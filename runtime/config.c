/* config.c: the SystemDS-style XML configuration file (flat key/value). */
#include "config.h"

#include <ctype.h>
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
}

static bool truthy(const char *v) { return !strcasecmp(v, "true") || !strcmp(v, "1"); }

int config_read(const char *path, BraidConfig *c, BrErr *e)
{
    FILE *f = fopen(path, "r");
    if (!f) return br_err(e, BR_EIO, "cannot open config file %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (!s || fread(s, 1, (size_t)n, f) != (size_t)n) { fclose(f); free(s); return br_err(e, BR_EIO, "cannot read %s", path); }
    s[n] = 0;
    fclose(f);
    char unknown[1024] = "";
    const char *p = s;
    int depth = 0;
    while ((p = strchr(p, '<'))) {
        int line = 1;
        for (const char *q = s; q < p; q++) line += *q == '\n';
        if (p[1] == '?' || p[1] == '!') { p = strchr(p, '>'); if (!p) break; continue; }
        if (p[1] == '/') { depth--; p = strchr(p, '>'); if (!p) break; continue; }
        const char *ke = strpbrk(p + 1, "> \t\n/");
        if (!ke) { free(s); return br_err(e, BR_EARG, "%s:%d: malformed tag", path, line); }
        char key[128];
        size_t kl = (size_t)(ke - p - 1);
        if (kl >= sizeof key) kl = sizeof key - 1;
        memcpy(key, p + 1, kl);
        key[kl] = 0;
        const char *gt = strchr(ke, '>');
        if (!gt) { free(s); return br_err(e, BR_EARG, "%s:%d: unterminated tag <%s", path, line, key); }
        if (depth == 0) { depth++; p = gt + 1; continue; } /* the root element */
        const char *end = strstr(gt + 1, "</");
        if (!end) { free(s); return br_err(e, BR_EARG, "%s:%d: <%s> is not closed", path, line, key); }
        char val[512];
        size_t vl = (size_t)(end - gt - 1);
        if (vl >= sizeof val) vl = sizeof val - 1;
        memcpy(val, gt + 1, vl);
        val[vl] = 0;
        char *v = val;
        while (isspace((unsigned char)*v)) v++;
        for (char *t = v + strlen(v); t > v && isspace((unsigned char)t[-1]); ) *--t = 0;
        if (!strcmp(key, "sysds.optlevel")) c->optlevel = atoi(v);
        else if (!strcmp(key, "sysds.codegen.enabled")) c->codegen = truthy(v);
        else if (!strcmp(key, "sysds.codegen.optimizer")) snprintf(c->codegen_optimizer, sizeof c->codegen_optimizer, "%s", v);
        else if (!strcmp(key, "sysds.codegen.plancache")) c->plancache = truthy(v);
        else if (!strcmp(key, "sysds.codegen.async")) c->cg_async = truthy(v);
        else if (!strcmp(key, "sysds.cp.parallel.ops")) c->threads = truthy(v) ? 0 : 1;
        else if (!strcmp(key, "sysds.num.threads")) c->threads = atoi(v);
        else if (!strcmp(key, "sysds.local.memory.budget")) c->mem_budget = atof(v);
        else if (!strcmp(key, "sysds.defaultblocksize")) c->blocksize = atoll(v) > 0 ? atoll(v) : 1000;
        else if (!strcmp(key, "sysds.localtmpdir")) snprintf(c->localtmpdir, sizeof c->localtmpdir, "%s", v);
        else if (strlen(unknown) + strlen(key) + 3 < sizeof unknown) {
            if (unknown[0]) strcat(unknown, ", ");
            strcat(unknown, key);
        }
        p = strchr(end, '>');
        if (!p) break;
    }
    free(s);
    if (unknown[0]) fprintf(stderr, "braid: warning: %s: ignoring configuration keys braid does not implement: %s\n", path, unknown);
    return 0;
}
