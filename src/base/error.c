/* error.c - see error.h. */
#include "error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void cp_error_clear(cp_error *err)
{
    if (!err)
        return;
    memset(err, 0, sizeof *err);
    err->offset = -1;
}

static void set_location(cp_error *err, int code, const char *file, long line, long col,
                         long long offset)
{
    err->code = code;
    err->sys_errno = 0;
    snprintf(err->file, sizeof err->file, "%s", file ? file : "");
    err->line = line;
    err->col = col;
    err->offset = offset;
}

int cp_error_set(cp_error *err, int code, const char *file, long line, long col,
                 long long offset, const char *fmt, ...)
{
    if (!err)
        return code;
    set_location(err, code, file, line, col, offset);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return code;
}

int cp_error_sys(cp_error *err, int code, const char *file, const char *fmt, ...)
{
    int saved = errno;
    if (!err)
        return code;
    set_location(err, code, file, 0, 0, -1);
    err->sys_errno = saved;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n < sizeof err->msg)
        snprintf(err->msg + n, sizeof err->msg - (size_t)n, ": %s", strerror(saved));
    return code;
}

const char *cp_error_format(const cp_error *err, char *buf, size_t size)
{
    if (!err || size == 0)
        return "";
    if (!err->file[0])
        snprintf(buf, size, "%s", err->msg);
    else if (err->line > 0 && err->col > 0)
        snprintf(buf, size, "%s:%ld:%ld: %s", err->file, err->line, err->col, err->msg);
    else if (err->line > 0)
        snprintf(buf, size, "%s:%ld: %s", err->file, err->line, err->msg);
    else if (err->offset >= 0)
        snprintf(buf, size, "%s:%lld: %s", err->file, err->offset, err->msg);
    else
        snprintf(buf, size, "%s: %s", err->file, err->msg);
    return buf;
}

int cp_status_exit_code(int status)
{
    switch (status) {
    case CP_OK: return 0;
    case CP_ERR_USAGE: return 2;
    case CP_ERR_FORMAT: return 3;
    case CP_ERR_CHECK: return 4;
    case CP_ERR_UNAVAILABLE: return 5;
    default: return 1;
    }
}

const char *cp_status_name(int status)
{
    switch (status) {
    case CP_OK: return "ok";
    case CP_ERR_IO: return "io";
    case CP_ERR_FORMAT: return "format";
    case CP_ERR_NOMEM: return "nomem";
    case CP_ERR_USAGE: return "usage";
    case CP_ERR_UNAVAILABLE: return "unavailable";
    case CP_ERR_CHECK: return "check";
    case CP_ERR_INTERNAL: return "internal";
    case CP_ERR_TIMEOUT: return "timeout";
    default: return "unknown";
    }
}
