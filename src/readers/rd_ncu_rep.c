/* rd_ncu_rep.c - Nsight Compute report files (.ncu-rep): exported with
 * `ncu --import FILE --csv --page raw` when ncu is on PATH and read by the
 * ncu CSV reader (rd_ncu.c), so a report reads exactly as the user's own
 * raw-page export would. Without ncu, analyze stops before reading anything
 * (exit 5) with the exact command to run (rd_ncurep_ready), as for
 * .nsys-rep.
 *
 * The export goes to a temporary file (ncu's stdout), which is removed
 * after reading; the report itself is only read by ncu.
 */
#include "rd_ncu.h"

#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../base/util.h"
#include "rd_text.h"

extern char **environ;

int rd_ncurep_sniff(const char *head, size_t n)
{
    (void)head, (void)n;
    return 0; /* a binary container: claimed by its name (".ncu-rep") */
}

int rd_ncurep_ready(const char *path, cp_error *err)
{
    char ncu[4096];
    if (!cp_str_ends(path, ".ncu-rep") || rd_which("ncu", ncu, sizeof ncu))
        return 0;
    return cp_error_set(err, CP_ERR_UNAVAILABLE, path, 0, 0, -1,
                        "ncu is not on PATH to export this report; run: ncu --import %s --csv --page raw > %.*s.csv "
                        "and analyze the .csv file",
                        path, (int)(strlen(path) - strlen(".ncu-rep")), path);
}

/* Run ncu with stdout into out; 0 when it exited 0. */
static int export_raw(const char *ncu, const char *path, const char *out)
{
    posix_spawn_file_actions_t fa;
    if (posix_spawn_file_actions_init(&fa) != 0)
        return -1;
    posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    char *argv[] = {(char *)ncu, "--import", (char *)path, "--csv", "--page", "raw", NULL};
    pid_t pid;
    int status = -1, rc = -1;
    if (posix_spawn(&pid, ncu, &fa, NULL, argv, environ) == 0 && waitpid(pid, &status, 0) >= 0 &&
        WIFEXITED(status) && WEXITSTATUS(status) == 0)
        rc = 0;
    posix_spawn_file_actions_destroy(&fa);
    return rc;
}

void *rd_ncurep_file(const char *path, const char *data, size_t len, diag_set *diag)
{
    (void)data, (void)len;
    char ncu[4096], tmpdir[] = "/tmp/chainprof-ncu-XXXXXX", out[512];
    if (!rd_which("ncu", ncu, sizeof ncu) || !mkdtemp(tmpdir))
        return NULL;
    snprintf(out, sizeof out, "%s/raw.csv", tmpdir);
    void *facts = NULL;
    char *csv = NULL;
    size_t n = 0;
    cp_error err;
    if (export_raw(ncu, path, out) == 0 && rd_load_file(out, &csv, &n, &err) == 0) {
        void *st = rd_ncu_begin(path);
        rd_lines it;
        rd_lines_init(&it, csv, n);
        const char *line;
        size_t ll;
        while (rd_lines_next(&it, &line, &ll)) {
            rd_line ln = {line, ll, (long)it.lineno, NULL};
            rd_ncu_line(st, &ln);
        }
        facts = rd_ncu_end(st, diag);
    } else {
        rd_note(diag, DIAG_UNPARSED_LINE, path, 0); /* ncu could not export it */
    }
    free(csv);
    unlink(out);
    rmdir(tmpdir);
    return facts;
}
