/* cmd_run.c - `chainprof run`: time an unmodified job layer by layer.
 *
 * Runs CMD with the collector preloaded (libchainprof_collect.so, src/collect)
 * and configured through the environment (src/collect/col_env.h): the
 * driver layer by interposition (and CUPTI), the communication layer as
 * NCCL's profiler plugin (NCCL_PROFILER_PLUGIN = the same library), the
 * framework layer through the Python package (python/ on PYTHONPATH, its
 * sitecustomize installing torch's hooks), the storage layer by libc I/O
 * interposition. Under mpirun/srun/torchrun each rank's process runs its own
 * `chainprof run`; rank 0's serves as the clock reference (run_clock.c).
 *
 * After the job: a process that left a trace but neither marked a step nor
 * called CUDA or NCCL (a launcher, a helper) while another process of this
 * run did is not part of the training: its file is removed, so analyze
 * sees one file per rank. The exit status is the job's (128 + signal when a
 * signal ended it).
 */
#include "cli.h"
#include "run_clock.h"
#include "../base/log.h"
#include "../base/util.h"
#include "../collect/col_env.h"
#include "chainprof/cptrace.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum {
    O_OUT = 100, O_MODE, O_STEPS, O_STDERR, O_RING, O_CKPT, O_DATA, O_NO_CUPTI, O_LIB, O_CLOCK_TIMEOUT,
    O_NO_SYNC,
};

static const cli_opt opts[] = {
    { "out", 'o', "DIR", O_OUT, 0, "output directory, created if missing (default chainprof-run)" },
    { "mode", 0, "trace|summary", O_MODE, 0, "per-process timelines for analyze (default), or per-step totals" },
    { "steps", 0, "A-B", O_STEPS, 0, "keep only steps A to B (A-, -B open-ended)" },
    { "stderr", 0, NULL, O_STDERR, 0, "summary mode: also print each step's line on stderr" },
    { "ring-kb", 0, "KIB", O_RING, 0, "per-thread record ring (default 256; full rings drop and count)" },
    { "ckpt-dir", 0, "DIR", O_CKPT, CLI_OPT_REPEAT, "file I/O under DIR is checkpoint I/O" },
    { "data-dir", 0, "DIR", O_DATA, CLI_OPT_REPEAT, "file I/O under DIR is dataset I/O" },
    { "no-cupti", 0, NULL, O_NO_CUPTI, 0, "do not load CUPTI (no GPU-side kernel and copy times)" },
    { "lib", 0, "PATH", O_LIB, 0, "the collector library (default: next to this binary)" },
    { "clock-timeout", 0, "S", O_CLOCK_TIMEOUT, 0, "how long ranks wait for rank 0's clock (default 30)" },
    { "no-clock-sync", 0, NULL, O_NO_SYNC, 0, "keep every host's own clock (NTP/PTP)" },
    { "quiet", 'q', NULL, CLI_O_QUIET, 0, "no summary line after the job" },
};

/* A, A-B, A- or -B with step numbers. */
static bool valid_steps(const char *s)
{
    const char *dash = strchr(s, '-');
    size_t a = strspn(s, "0123456789");
    if (!dash)
        return a > 0 && !s[a];
    size_t b = strspn(dash + 1, "0123456789");
    return (size_t)(dash - s) == a && !dash[1 + b] && (a > 0 || b > 0);
}

/* ---- locating the collector and the Python package ---- */

static int exe_dir(char *out, size_t n)
{
    char exe[PATH_MAX];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (k <= 0)
        return -1;
    exe[k] = 0;
    char *slash = strrchr(exe, '/');
    if (!slash)
        return -1;
    *slash = 0;
    snprintf(out, n, "%s", exe);
    return 0;
}

static bool first_file(char *out, size_t n, const char *dir, const char *const *rel, size_t nrel)
{
    for (size_t i = 0; i < nrel; i++) {
        if (snprintf(out, n, "%s/%s", dir, rel[i]) < (int)n && access(out, R_OK) == 0)
            return true;
    }
    return false;
}

static int find_lib(const cli_ctx *ctx, char *out, size_t n)
{
    const char *given = cli_get(ctx, O_LIB);
    if (given) {
        if (!realpath(given, out) || access(out, R_OK) != 0) {
            cp_log_error("run: --lib %s: %s", given, strerror(errno));
            return -1;
        }
        return 0;
    }
    char dir[PATH_MAX];
    static const char *const rel[] = { COL_LIB_NAME, "../lib/chainprof/" COL_LIB_NAME, "../lib/" COL_LIB_NAME };
    if (exe_dir(dir, sizeof dir) == 0 && first_file(out, n, dir, rel, CP_ARRAY_LEN(rel))) {
        char real[PATH_MAX];
        if (realpath(out, real))
            snprintf(out, n, "%s", real);
        return 0;
    }
    cp_log_error("run: %s not found next to the chainprof binary (%s, ../lib/chainprof, ../lib): build the "
                 "chainprof_collect target or give --lib", COL_LIB_NAME, dir);
    return -1;
}

/* python/ of the checkout (or the installed share/chainprof/python): where
 * `import chainprof` and the start-up hook come from. */
static bool find_python(char *out, size_t n)
{
    const char *env = getenv("CHAINPROF_PYTHON_DIR");
    if (env && *env) {
        snprintf(out, n, "%s", env);
        return true;
    }
    char dir[PATH_MAX], probe[PATH_MAX + 64];
    static const char *const rel[] = { "../python", "../share/chainprof/python" };
    if (exe_dir(dir, sizeof dir) != 0)
        return false;
    for (size_t i = 0; i < CP_ARRAY_LEN(rel); i++) {
        snprintf(probe, sizeof probe, "%s/%s/chainprof_boot/sitecustomize.py", dir, rel[i]);
        if (access(probe, R_OK) == 0) {
            snprintf(probe, sizeof probe, "%s/%s", dir, rel[i]);
            if (realpath(probe, out))
                return true;
        }
    }
    return false;
}

/* ---- the job's environment ---- */

static void prepend(const char *var, const char *val)
{
    const char *old = getenv(var);
    if (old && *old) {
        size_t len = strlen(val) + strlen(old) + 2;
        char *v = cp_xmalloc(len);
        snprintf(v, len, "%s:%s", val, old);
        setenv(var, v, 1);
        free(v);
    } else {
        setenv(var, val, 1);
    }
}

static int rank_of_env(void)
{
    static const char *const vars[] = {
#define X(r, s, l) r,
        COL_RANK_VARS(X)
#undef X
    };
    for (size_t i = 0; i < CP_ARRAY_LEN(vars); i++) {
        const char *v = getenv(vars[i]);
        char *end;
        if (v && *v) {
            long r = strtol(v, &end, 10);
            if (!*end && r >= 0)
                return (int)r;
        }
    }
    return -1;
}

/* The launcher's job id: the clock file's name, recorded in the headers. */
static void job_id(char *out, size_t n)
{
    const char *slurm = getenv("SLURM_JOB_ID"), *step = getenv("SLURM_STEP_ID");
    const char *others[] = { getenv("TORCHELASTIC_RUN_ID"), getenv("OMPI_MCA_ess_base_jobid"), getenv("PMIX_NAMESPACE") };
    if (slurm && *slurm) {
        snprintf(out, n, "slurm-%s.%s", slurm, step && *step ? step : "0");
        return;
    }
    for (size_t i = 0; i < CP_ARRAY_LEN(others); i++)
        if (others[i] && *others[i]) {
            snprintf(out, n, "%s", others[i]);
            return;
        }
    snprintf(out, n, "job");
}

/* DIR1:DIR2 from a repeated option, made absolute. */
static void dir_list(const cli_ctx *ctx, int id, const char *var)
{
    const char *v[64];
    size_t n = cli_get_all(ctx, id, v, CP_ARRAY_LEN(v));
    if (n > CP_ARRAY_LEN(v))
        n = CP_ARRAY_LEN(v);
    if (!n)
        return;
    char *list = cp_xcalloc(n, PATH_MAX + 1);
    for (size_t i = 0; i < n; i++) {
        char abs[PATH_MAX];
        if (!realpath(v[i], abs))
            snprintf(abs, sizeof abs, "%s", v[i]);
        if (i)
            strcat(list, ":");
        strcat(list, abs);
    }
    setenv(var, list, 1);
    free(list);
}

static int mkdir_p(const char *dir)
{
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s", dir);
    for (char *s = p + 1; *s; s++)
        if (*s == '/') {
            *s = 0;
            if (mkdir(p, 0755) != 0 && errno != EEXIST)
                return -1;
            *s = '/';
        }
    return mkdir(p, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

/* ---- after the job ---- */

typedef struct run_file {
    char path[PATH_MAX];
    bool busy; /* marked a step or called CUDA/NCCL */
} run_file;

/* This run's main trace files (header run_pid), with what their END
 * record says. */
static size_t our_files(const char *dir, run_file **out)
{
    *out = NULL;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!cp_str_ends(e->d_name, COL_TRACE_EXT))
            continue;
        run_file f;
        if (snprintf(f.path, sizeof f.path, "%s/%s", dir, e->d_name) >= (int)sizeof f.path)
            continue;
        int fd = open(f.path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        cpt_header h;
        cpt_rec end;
        struct stat st;
        bool ok = read(fd, &h, sizeof h) == (ssize_t)sizeof h && !memcmp(h.magic, CPT_MAGIC, 8) &&
                  h.run_pid == (int32_t)getpid() && h.role == CPT_ROLE_MAIN && fstat(fd, &st) == 0 &&
                  st.st_size >= (off_t)(sizeof h + sizeof end) &&
                  pread(fd, &end, sizeof end, st.st_size - (off_t)sizeof end) == (ssize_t)sizeof end;
        close(fd);
        if (!ok)
            continue;
        f.busy = end.kind != CPT_K_END || end.u32 > 0 || end.c > 0; /* no END: keep what we cannot judge */
        cp_xgrow((void **)out, &cap, n + 1, sizeof **out);
        (*out)[n++] = f;
    }
    closedir(d);
    return n;
}

static void remove_bystanders(const char *dir, bool quiet)
{
    run_file *f;
    size_t n = our_files(dir, &f), busy = 0, removed = 0;
    for (size_t i = 0; i < n; i++)
        busy += f[i].busy;
    for (size_t i = 0; busy && i < n; i++)
        if (!f[i].busy && unlink(f[i].path) == 0)
            removed++;
    if (!quiet)
        cp_log_info("run: %zu trace file%s in %s%s", n - removed, n - removed == 1 ? "" : "s", dir,
                    removed ? " (files of processes that neither stepped nor used the GPU removed)" : "");
    free(f);
}

static volatile sig_atomic_t child_pid;

static void forward(int sig)
{
    if (child_pid > 0)
        kill((pid_t)child_pid, sig);
}

static int wait_child(pid_t pid)
{
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return CLI_EXIT_FAIL;
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    if (WIFSIGNALED(st))
        return 128 + WTERMSIG(st);
    return CLI_EXIT_FAIL;
}

/* ---- the command ---- */

/* Options end at "--" or at the first word that is neither an option nor
 * an option's value: the rest is the job's command line, verbatim. */
static int split_command(cli_ctx *ctx, int *cmd_at)
{
    *cmd_at = ctx->sub_argc;
    for (int i = 0; i < ctx->sub_argc; i++) {
        const char *a = ctx->sub_argv[i];
        if (!strcmp(a, "--")) {
            *cmd_at = i + 1;
            return i;
        }
        if (a[0] != '-' || !a[1]) {
            *cmd_at = i;
            return i;
        }
        if (strchr(a, '='))
            continue;
        for (size_t k = 0; k < CP_ARRAY_LEN(opts); k++) {
            bool match = (a[1] == '-' && !strcmp(a + 2, opts[k].name)) ||
                         (a[1] != '-' && opts[k].short_name && a[1] == opts[k].short_name && !a[2]);
            if (match && opts[k].arg)
                i++;
        }
    }
    return ctx->sub_argc;
}

static int configure(cli_ctx *ctx, const char *lib, const char *out_dir, int mode_summary)
{
    setenv(COL_ENV_OUT, out_dir, 1);
    setenv(COL_ENV_MODE, mode_summary ? "summary" : "trace", 1);
    setenv(COL_ENV_LIB, lib, 1);
    if (cli_get(ctx, O_STEPS))
        setenv(COL_ENV_STEPS, cli_get(ctx, O_STEPS), 1);
    else
        unsetenv(COL_ENV_STEPS);
    long kb;
    if (cli_get_long(ctx, O_RING, 256, 16, 4 << 20, &kb) < 0)
        return CLI_EXIT_USAGE;
    char v[64];
    snprintf(v, sizeof v, "%ld", kb);
    setenv(COL_ENV_RING_KB, v, 1);
    setenv(COL_ENV_STDERR, cli_has(ctx, O_STDERR) ? "1" : "0", 1);
    dir_list(ctx, O_CKPT, COL_ENV_CKPT_DIRS);
    dir_list(ctx, O_DATA, COL_ENV_DATA_DIRS);
    if (cli_has(ctx, O_NO_CUPTI))
        setenv(COL_ENV_CUPTI, "0", 1);
    snprintf(v, sizeof v, "%d", (int)getpid());
    setenv(COL_ENV_RUN_PID, v, 1);
    prepend("LD_PRELOAD", lib);
    const char *plugin = getenv("NCCL_PROFILER_PLUGIN");
    if (plugin && *plugin && strcmp(plugin, lib) != 0)
        cp_log_warn("run: NCCL_PROFILER_PLUGIN=%s is kept: NCCL's own events (operations, proxy steps) will be "
                    "missing from the communication layer", plugin);
    else
        setenv("NCCL_PROFILER_PLUGIN", lib, 1);
    char py[PATH_MAX], boot[PATH_MAX + 32];
    if (find_python(py, sizeof py)) {
        snprintf(boot, sizeof boot, "%s/chainprof_boot", py);
        prepend("PYTHONPATH", boot);
        prepend("PYTHONPATH", py);
    } else {
        cp_log_warn("run: the chainprof Python package was not found (python/ next to the build, or "
                    "CHAINPROF_PYTHON_DIR): no automatic framework marks");
    }
    return 0;
}

static void sync_clock(cli_ctx *ctx, const char *out_dir, run_clock *clk)
{
    memset(clk, 0, sizeof *clk);
    clk->listen_fd = -1;
    clk->sync = CPT_SYNC_NONE;
    clk->rtt_ns = -1;
    char job[128];
    job_id(job, sizeof job);
    setenv(COL_ENV_JOB, job, 1);
    int rank = rank_of_env();
    double timeout;
    if (cli_get_double(ctx, O_CLOCK_TIMEOUT, 30, 0, 3600, &timeout) < 0)
        timeout = 30;
    if (rank == 0 && !cli_has(ctx, O_NO_SYNC))
        run_clock_lead(clk, out_dir, job);
    else if (rank > 0 && !cli_has(ctx, O_NO_SYNC))
        run_clock_follow(clk, out_dir, job, timeout);
    char v[96];
    snprintf(v, sizeof v, "%d %lld %lld", clk->sync, (long long)clk->offset_ns, (long long)clk->rtt_ns);
    setenv(COL_ENV_CLOCK, v, 1);
}

int cmd_run(cli_ctx *ctx)
{
    int cmd_at;
    int n_opts_argv = split_command(ctx, &cmd_at);
    int full = ctx->sub_argc;
    ctx->sub_argc = n_opts_argv;
    bool done;
    int rc = cli_parse_cmd(ctx, opts, CP_ARRAY_LEN(opts), false, &done);
    ctx->sub_argc = full;
    if (rc || done)
        return rc;
    if (cmd_at >= ctx->sub_argc)
        return cli_usage_error(ctx, "no command to run: chainprof run [options] -- CMD [ARGS...]");
    const char *mode = cli_get(ctx, O_MODE);
    if (mode && strcmp(mode, "trace") && strcmp(mode, "summary"))
        return cli_usage_error(ctx, "--mode '%s': expected trace or summary", mode);
    const char *steps = cli_get(ctx, O_STEPS);
    if (steps && !valid_steps(steps))
        return cli_usage_error(ctx, "--steps '%s': expected A-B, A- or -B (step numbers)", steps);
    bool summary = mode && !strcmp(mode, "summary");
    char lib[PATH_MAX], out_dir[PATH_MAX];
    if (find_lib(ctx, lib, sizeof lib) < 0)
        return CLI_EXIT_UNAVAILABLE;
    const char *out = cli_get(ctx, O_OUT) ? cli_get(ctx, O_OUT) : "chainprof-run";
    if (mkdir_p(out) != 0 || !realpath(out, out_dir)) {
        cp_log_error("run: %s: cannot create the output directory: %s", out, strerror(errno));
        return CLI_EXIT_FAIL;
    }
    if ((rc = configure(ctx, lib, out_dir, summary)) != 0)
        return rc;
    run_clock clk;
    sync_clock(ctx, out_dir, &clk);
    cp_log_flush();
    pid_t pid = fork();
    if (pid < 0) {
        cp_log_error("run: cannot start %s: %s", ctx->sub_argv[cmd_at], strerror(errno));
        run_clock_end(&clk);
        return CLI_EXIT_FAIL;
    }
    if (pid == 0) {
        execvp(ctx->sub_argv[cmd_at], ctx->sub_argv + cmd_at);
        cp_log_error("run: cannot run %s: %s", ctx->sub_argv[cmd_at], strerror(errno));
        cp_log_flush();
        _exit(127);
    }
    child_pid = pid;
    struct sigaction sa = { .sa_handler = forward };
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    rc = wait_child(pid);
    run_clock_end(&clk);
    if (!summary)
        remove_bystanders(out_dir, cli_has(ctx, CLI_O_QUIET));
    return rc;
}
