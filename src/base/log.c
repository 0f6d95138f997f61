/* log.c - see log.h. */
#include "log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define ONCE_MAX 64

static struct {
    pthread_mutex_t mu;
    int level;
    int n_once;
    char once_key[ONCE_MAX][64];
    long once_count[ONCE_MAX];
} g_log = { PTHREAD_MUTEX_INITIALIZER, CP_LOG_WARN, 0, {{0}}, {0} };

void cp_log_set_level(int level) { g_log.level = level; }
int cp_log_level(void) { return g_log.level; }

__attribute__((format(printf, 3, 0)))
static void vlog(int level, const char *tag, const char *fmt, va_list ap)
{
    if (level > g_log.level)
        return;
    char line[2048];
    int n = snprintf(line, sizeof line, "chainprof: %s", tag);
    vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    pthread_mutex_lock(&g_log.mu);
    fprintf(stderr, "%s\n", line);
    pthread_mutex_unlock(&g_log.mu);
}

#define DEFINE_LOG(fn, level, tag)          \
    void fn(const char *fmt, ...)           \
    {                                       \
        va_list ap;                         \
        va_start(ap, fmt);                  \
        vlog(level, tag, fmt, ap);          \
        va_end(ap);                         \
    }

DEFINE_LOG(cp_log_error, CP_LOG_ERROR, "error: ")
DEFINE_LOG(cp_log_warn, CP_LOG_WARN, "warning: ")
DEFINE_LOG(cp_log_info, CP_LOG_INFO, "")
DEFINE_LOG(cp_log_debug, CP_LOG_DEBUG, "debug: ")

void cp_log_warn_once(const char *key, const char *fmt, ...)
{
    bool first = true;
    pthread_mutex_lock(&g_log.mu);
    int i;
    for (i = 0; i < g_log.n_once; i++)
        if (strcmp(g_log.once_key[i], key) == 0)
            break;
    if (i < g_log.n_once) {
        g_log.once_count[i]++;
        first = false;
    } else if (g_log.n_once < ONCE_MAX) {
        snprintf(g_log.once_key[i], sizeof g_log.once_key[i], "%s", key);
        g_log.once_count[i] = 0;
        g_log.n_once++;
    }
    pthread_mutex_unlock(&g_log.mu);
    if (!first)
        return;
    va_list ap;
    va_start(ap, fmt);
    vlog(CP_LOG_WARN, "warning: ", fmt, ap);
    va_end(ap);
}

void cp_log_flush(void)
{
    pthread_mutex_lock(&g_log.mu);
    for (int i = 0; i < g_log.n_once; i++)
        if (g_log.once_count[i] > 0 && g_log.level >= CP_LOG_WARN)
            fprintf(stderr, "chainprof: warning: (%ld more like '%s')\n", g_log.once_count[i],
                    g_log.once_key[i]);
    g_log.n_once = 0;
    pthread_mutex_unlock(&g_log.mu);
}

bool cp_log_stderr_is_tty(void) { return isatty(2); }

/* VmRSS and VmHWM of this process in KiB (0 where /proc is absent). */
static void rss_kib(long *cur, long *peak)
{
    *cur = *peak = 0;
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return;
    char line[256];
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, "VmRSS:", 6))
            *cur = atol(line + 6);
        else if (!strncmp(line, "VmHWM:", 6))
            *peak = atol(line + 6);
    }
    fclose(f);
}

void cp_log_phase(const char *what, long cpu0)
{
    if (g_log.level < CP_LOG_DEBUG)
        return;
    long cur, peak;
    rss_kib(&cur, &peak);
    cp_log_debug("%s: %.3f s cpu, rss %ld MB (peak %ld MB)", what, (double)(clock() - (clock_t)cpu0) / CLOCKS_PER_SEC,
                 cur / 1024, peak / 1024);
}
