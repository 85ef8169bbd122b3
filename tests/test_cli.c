/* test_cli.c: the braid command on bad input: truncated and mutated
 * scripts, bad arguments and bad files must end with exit status 1 and a
 * message (or run normally), never a crash by signal. Runs build/braid
 * (or $BRAID) under `timeout`. */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t.h"
#include "runtime/config.h"

static const char *braid_bin(void)
{
    const char *b = getenv("BRAID");
    return b ? b : "build/braid";
}

/* Runs braid on a script text; returns the exit status (128+sig on a
 * signal, 124 on timeout) and whether stderr had a message. */
static int run_text(const char *text, size_t n, bool *msg)
{
    char path[] = "/tmp/braid_cli_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) return -1;
    if (write(fd, text, n) != (ssize_t)n) { close(fd); unlink(path); return -1; }
    close(fd);
    char cmd[1024], errf[64], cwd[512] = "";
    snprintf(errf, sizeof errf, "%s.err", path);
    if (braid_bin()[0] != '/' && !getcwd(cwd, sizeof cwd)) return -1;
    snprintf(cmd, sizeof cmd, "cd /tmp && timeout -s KILL 10 %s%s%s -f %s -nvargs out=/tmp >/dev/null 2>%s",
             cwd, cwd[0] ? "/" : "", braid_bin(), path, errf);
    int st = system(cmd);
    FILE *f = fopen(errf, "r");
    *msg = false;
    if (f) { *msg = fgetc(f) != EOF; fclose(f); }
    unlink(path);
    unlink(errf);
    if (WIFSIGNALED(st)) return 128 + WTERMSIG(st);
    return WEXITSTATUS(st);
}


/* Malformed configuration files are errors naming file and line (issue
 * 23), well-formed ones are read. */
static void config_files(void)
{
    static const struct { const char *text, *want; } bad[] = {
        {"", "expected a root element"},
        {"hello", "expected a root element"},
        {"<root><sysds.optlevel>2</sysds.optlevel>", ":1: malformed configuration"},
        {"<root>\n<a>1</b>\n</root>", ":2: malformed configuration: <a> is not closed"},
        {"<root>\n\n<sysds.num.threads>abc</sysds.num.threads></root>", ":3: bad value \"abc\""},
        {"<root><sysds.num.threads>100000</sysds.num.threads></root>", "bad value"},
        {"<root><sysds.codegen.enabled>maybe</sysds.codegen.enabled></root>", "bad value \"maybe\""},
        {"<root>text<sysds.optlevel>2</sysds.optlevel></root>", "malformed"},
        {"<root><sysds.optlevel>2</sysds.optlevel></root> trailing", "expected </root> at the end"},
        {"<root><x><y>1</y></x></root>", "malformed"},
    };
    const char *path = "/tmp/braid_test_cli_config.xml";
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        t_put(path, bad[i].text);
        BraidConfig c;
        config_defaults(&c);
        BrErr e = {0};
        int rc = config_read(path, &c, &e);
        T_CHECK(rc != 0 && strstr(e.msg, path) && strstr(e.msg, bad[i].want), "config '%s': '%s'", bad[i].text, e.msg);
    }
    t_put(path, "<?xml version=\"1.0\"?>\n<!-- a > comment -->\n<root>\n  <sysds.codegen.enabled> false </sysds.codegen.enabled>\n"
                "  <sysds.num.threads>-1</sysds.num.threads>\n  <sysds.optlevel>0</sysds.optlevel>\n</root>\n");
    BraidConfig c;
    config_defaults(&c);
    BrErr e = {0};
    T_CHECK(config_read(path, &c, &e) == 0 && !c.codegen && c.threads == 0 && c.optlevel == 0, "good config: %s", e.msg);
    remove(path);
}

int main(void)
{
    glob_t g;
    if (glob("../shared/conformance/cases/*.dml", 0, NULL, &g) != 0 &&
        glob("tests/dml/cases/*.dml", 0, NULL, &g) != 0) {
        printf("test_cli: no scripts found\n");
        return t_done("test_cli");
    }
    srand(12345);
    int timeouts = 0;
    for (size_t i = 0; i < g.gl_pathc; i += 3) {
        size_t n;
        char *s = t_slurp(g.gl_pathv[i], &n);
        if (!s || n < 4) { free(s); continue; }
        for (int k = 0; k < 3; k++) {
            bool msg;
            /* truncated at a random point */
            size_t cut = (size_t)rand() % n;
            int rc = run_text(s, cut, &msg);
            if (rc == 128 + 9) timeouts++;
            else T_CHECK(rc == 0 || (rc == 1 && msg), "%s cut at %zu: exit %d", g.gl_pathv[i], cut, rc);
            /* random byte mutations */
            char *m = malloc(n);
            memcpy(m, s, n);
            for (int j = 0; j < 3; j++) m[(size_t)rand() % n] = "()[]{}+-*/=,;:\"'%$#\n x1.e"[rand() % 25];
            rc = run_text(m, n, &msg);
            if (rc == 128 + 9) timeouts++;
            else T_CHECK(rc == 0 || (rc == 1 && msg), "%s mutated: exit %d", g.gl_pathv[i], rc);
            free(m);
        }
        free(s);
    }
    globfree(&g);
    /* bad arguments and files */
    char cwd[512];
    if (getcwd(cwd, sizeof cwd)) {
        const char *cases[] = {
            "%s/%s -f /nonexistent/script.dml",
            "%s/%s -nvargs",
            "%s/%s -f",
            "%s/%s -config /nonexistent.xml -s 'print(1)'",
            "%s/%s -s 'X = read(\"/nonexistent/file.csv\")'",
            "%s/%s -s 'x = $undefined_arg + 1'",
            "%s/%s -bogus",
            "%s/%s -threads 100000 -s 'print(1)'",
            "%s/%s -threads -3 -s 'print(1)'",
            "%s/%s -threads 2x -s 'print(1)'",
        };
        for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
            char cmd[1024];
            /* an absolute $BRAID replaces the working-directory prefix */
            snprintf(cmd, sizeof cmd, cases[k], braid_bin()[0] == '/' ? "" : cwd, braid_bin());
            char full[1200];
            snprintf(full, sizeof full, "timeout -s KILL 10 %s >/dev/null 2>&1", cmd);
            int st = system(full);
            T_CHECK(!WIFSIGNALED(st) && WEXITSTATUS(st) == 1, "%s: status %d", cmd, WEXITSTATUS(st));
        }
    }
    config_files();
    if (timeouts) printf("test_cli: %d mutated scripts ran into the 10 s limit (infinite loops they encode)\n", timeouts);
    return t_done("test_cli");
}
