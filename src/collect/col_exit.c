/* col_exit.c - process ends the recorder must see: _exit (PyTorch's
 * data-loader workers and every multiprocessing child leave through
 * os._exit, which runs no atexit handler) and exec (the image that
 * recorded is replaced; the new one starts its own collector). Both write
 * and close the trace first. A failed exec leaves the collector off for the
 * rest of this process.
 *
 * A vfork child (CPython's subprocess uses vfork) shares its parent's
 * memory and runs these wrappers on the parent's thread state: it must not
 * touch the recorder, so every wrapper first checks that it is the process
 * the recorder belongs to.
 */
#include "col.h"

#include <sys/syscall.h>
#include <unistd.h>

bool col_is_owner(void) { return (int32_t)syscall(SYS_getpid) == col_p.pid; }

static void finish(void)
{
    if (col_is_owner())
        col_shutdown();
}

typedef void (*exit_fn)(int);
typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execv_fn)(const char *, char *const[]);

COL_EXPORT void _exit(int status)
{
    static exit_fn real;
    COL_REAL(real, "_exit", NULL);
    finish();
    if (real)
        real(status);
    for (;;)
        ; /* unreachable: the real _exit does not return */
}

COL_EXPORT void _Exit(int status)
{
    static exit_fn real;
    COL_REAL(real, "_Exit", NULL);
    finish();
    if (real)
        real(status);
    for (;;)
        ;
}

COL_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
    static execve_fn real;
    COL_REAL(real, "execve", NULL);
    finish();
    return real ? real(path, argv, envp) : -1;
}

COL_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
    static execve_fn real;
    COL_REAL(real, "execvpe", NULL);
    finish();
    return real ? real(file, argv, envp) : -1;
}

COL_EXPORT int execv(const char *path, char *const argv[])
{
    static execv_fn real;
    COL_REAL(real, "execv", NULL);
    finish();
    return real ? real(path, argv) : -1;
}

COL_EXPORT int execvp(const char *file, char *const argv[])
{
    static execv_fn real;
    COL_REAL(real, "execvp", NULL);
    finish();
    return real ? real(file, argv) : -1;
}
