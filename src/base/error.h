/* error.h - one error struct for every fallible call (yyjson-style).
 *
 * Fallible functions return 0 on success or a negative cp_status, and fill an
 * optional cp_error (NULL is allowed everywhere: callers that do not care pass
 * NULL). The struct is plain data owned by the caller; nothing in it needs
 * freeing. Messages follow the project style: lower-case, no final period, and
 * the formatted form is "FILE:LINE:COL: what failed: why" (fields that are
 * unknown are left out).
 *
 * Only src/cli turns a status into an exit code (cp_status_exit_code) and only
 * the log module writes stderr.
 */
#ifndef CP_BASE_ERROR_H
#define CP_BASE_ERROR_H

#include <stddef.h>
#include <stdint.h>

typedef enum cp_status {
    CP_OK = 0,
    CP_ERR_IO = -1,          /* open/read/write failed (sys_errno set) */
    CP_ERR_FORMAT = -2,      /* input is not the claimed/recognised format */
    CP_ERR_NOMEM = -3,       /* allocation failed or a cap was exceeded */
    CP_ERR_USAGE = -4,       /* bad option or argument */
    CP_ERR_UNAVAILABLE = -5, /* optional component (library, tool, device) missing */
    CP_ERR_CHECK = -6,       /* a requested check failed (e.g. --fail-on) */
    CP_ERR_INTERNAL = -7,    /* a bug: invariant violated */
    CP_ERR_TIMEOUT = -8,     /* a network or process wait timed out */
} cp_status;

typedef struct cp_error {
    int code;            /* a cp_status; CP_OK when nothing failed */
    int sys_errno;       /* errno at failure, 0 when not a system error */
    char file[512];      /* input file the error is about, "" if none */
    long line;           /* 1-based line, 0 when unknown */
    long col;            /* 1-based column, 0 when unknown */
    long long offset;    /* byte offset in the (uncompressed) input, -1 when unknown */
    char msg[512];       /* "what failed: why" */
} cp_error;

/* Reset to "no error". */
void cp_error_clear(cp_error *err);

/* Fill err (if non-NULL) and return code. file may be NULL; line/col 0 and
 * offset -1 mean unknown. Always returns `code` so callers can write
 * `return cp_error_set(err, CP_ERR_FORMAT, path, 0, 0, off, "...");`. */
int cp_error_set(cp_error *err, int code, const char *file, long line, long col,
                 long long offset, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));

/* Like cp_error_set for a failed system call: records errno and appends
 * ": strerror(errno)" to the message. */
int cp_error_sys(cp_error *err, int code, const char *file, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Format as "FILE:LINE:COL: msg" (or "FILE:OFFSET: msg" when only the offset
 * is known) into buf. Returns buf. */
const char *cp_error_format(const cp_error *err, char *buf, size_t size);

/* Map a status to the documented process exit code (see docs: 0 ok, 1 runtime
 * failure, 2 usage, 3 input not recognised, 4 check failed, 5 unavailable). */
int cp_status_exit_code(int status);
/* The status as a lower-case word ("format", "usage", ...): the name the
 * machine-readable error record (CHAINPROF_ERROR_FILE) and the Python
 * package's exceptions carry. */
const char *cp_status_name(int status);

#endif
