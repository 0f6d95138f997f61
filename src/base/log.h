/* log.h - the only module that writes stderr.
 *
 * Messages are "chainprof: TEXT" (the caller formats file:line:col prefixes
 * with cp_error_format). A warning keyed by a short string is printed once
 * and counted afterwards; cp_log_flush() prints "(N more like this)" lines,
 * so a damaged input with a million bad records produces a handful of lines.
 *
 * This module holds the one piece of process-wide mutable state in the tool
 * (verbosity and repeat counters), guarded by a mutex because readers run on
 * several threads. Everything else passes state explicitly.
 */
#ifndef CP_BASE_LOG_H
#define CP_BASE_LOG_H

#include <stdbool.h>

enum cp_log_level { CP_LOG_QUIET = 0, CP_LOG_ERROR, CP_LOG_WARN, CP_LOG_INFO, CP_LOG_DEBUG };

void cp_log_set_level(int level);
int cp_log_level(void);

void cp_log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cp_log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cp_log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cp_log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Warn once per key; later calls with the same key only count. */
void cp_log_warn_once(const char *key, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Print the repeat counts of keyed warnings and reset them. */
void cp_log_flush(void);

/* At -vv: "WHAT: S s cpu, rss R MB (peak P MB)" with the process CPU time
 * since cpu0 (a clock() value) and the memory /proc/self/status reports, so
 * a user sees which phase costs the time and which one the memory. */
void cp_log_phase(const char *what, long cpu0);

/* True when stderr is a terminal (progress output is allowed only then). */
bool cp_log_stderr_is_tty(void);

#endif
