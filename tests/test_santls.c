/* test_santls.c: a dynamic TLS block, the kind PoCL's LLVM and generated
 * kernels' shared objects bring, placed where GCC 12's sanitizer run time
 * misreads it (base/base.c, __asan_default_options): LeakSanitizer's
 * check must still run to its end.
 *
 * A child process allocates k blocks of 16 bytes (br_malloc), then opens a shared
 * object with 16 bytes of thread-local storage and touches them: glibc
 * allocates the object's TLS block then, of the same size class, so with
 * the right k it starts 16 bytes into a page. The child reports the
 * block's address; where it is 16 bytes into a page, the child runs
 * LeakSanitizer's check (in the sanitizer build) and exits 0. With the
 * run time's __tls_get_addr interceptor on (ASAN_OPTIONS=
 * intercept_tls_get_addr=1) the check's tracer faults there ("Tracer
 * caught signal 11") and the child exits 1: how CI failed once. k runs
 * from 0 until a child places the block so; the plain build (glibc's
 * allocator, no interceptor) runs the child with k = 0 only. */
#include "t.h"

#include <dlfcn.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#if T_SAN
#include <sanitizer/lsan_interface.h>
/* base/base.c's: linked in with base.o, which br_malloc brings (a name
 * that only the sanitizer's run time would resolve brings nothing: its
 * own empty default is there first) */
const char *__asan_default_options(void);
#endif

static void *g_keep[4096];

static void child(const char *so, int k, int fd)
{
    for (int i = 0; i < k; i++) g_keep[i] = br_malloc(16);
    void *h = dlopen(so, RTLD_NOW);
    char *(*touch)(void) = h ? (char *(*)(void))dlsym(h, "touch") : NULL;
    uintptr_t at = touch ? (uintptr_t)touch() : 0;
    if (write(fd, &at, sizeof at) != (ssize_t)sizeof at) _exit(3);
#if T_SAN
    if (at % 4096 == 16) __lsan_do_recoverable_leak_check();
#endif
    _exit(at ? 0 : 2);
}

int main(void)
{
#if T_SAN
    T_CHECK(strstr(__asan_default_options(), "intercept_tls_get_addr=0"), "the default options: %s",
            __asan_default_options());
#endif
    char dir[] = "/tmp/braid-santls-XXXXXX";
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 2; }
    char src[256], so[256], cmd[768];
    snprintf(src, sizeof src, "%s/tls.c", dir);
    snprintf(so, sizeof so, "%s/tls.so", dir);
    t_put(src, "__thread char t[16];\nchar *touch(void) { t[0] = 1; return t; }\n");
    snprintf(cmd, sizeof cmd, "cc -shared -fPIC -o '%s' '%s'", so, src);
    int built = system(cmd);
    T_CHECK(built == 0, "%s: exit status %d", cmd, built);
    int hit = -1, tries = 0;
    for (int k = 0; built == 0 && k < (T_SAN ? 4096 : 1) && hit < 0; k++, tries++) {
        int fd[2];
        if (pipe(fd)) { perror("pipe"); break; }
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0) { close(fd[0]); child(so, k, fd[1]); }
        close(fd[1]);
        uintptr_t at = 0;
        ssize_t got = pid > 0 ? read(fd[0], &at, sizeof at) : -1;
        close(fd[0]);
        int st = 0;
        if (pid > 0) waitpid(pid, &st, 0);
        bool ok = pid > 0 && got == (ssize_t)sizeof at && at && WIFEXITED(st) && WEXITSTATUS(st) == 0;
        if (k == 0 || !ok || at % 4096 == 16)
            T_CHECK(ok, "k %d: the child %s (TLS block at %#lx, status %#x)", k,
                    pid <= 0 ? "did not start" : "failed", (unsigned long)at, st);
        if (at % 4096 == 16) hit = k;
        if (!ok) break;
    }
    if (T_SAN)
        T_CHECK(hit >= 0, "no TLS block started 16 bytes into a page in %d children: the allocator places blocks "
                          "otherwise now, and this test no longer reaches the case", tries);
    printf("TLS block 16 bytes into a page with k = %d (%d children)\n", hit, tries);
    unlink(so);
    unlink(src);
    rmdir(dir);
    return t_done("test_santls");
}
