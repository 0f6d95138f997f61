/* cmd_monitor.c - `chainprof monitor`: live samples of the five layers
 * every --interval seconds (src/monitor/mon.h), served to Prometheus
 * (--prometheus ADDR:PORT, /metrics), appended as JSON lines (--json-lines
 * FILE) and shown as one terse line per sample on a terminal. Alerts are the
 * rule book's findings over the last --window samples (mon_evidence.c turns
 * them into evidence; the rule book is the one analyze and diagnose run).
 *
 * One thread: poll waits for the next sample time, a scrape or a signal
 * (SIGTERM, SIGINT through a signalfd, so no handler and no global), and a
 * scrape is answered from the exposition of the latest sample, within the
 * bounds of mon_http.h. The JSON lines file is a log that grows: each line
 * is one write(2) to a file opened for appending, so a reader never sees
 * half a line; a file given as input elsewhere is never truncated.
 */
#include "cli.h"
#include "../analysis/rulebook.h"
#include "../base/log.h"
#include "../base/util.h"
#include "../model/vocab.h"
#include "../monitor/mon.h"
#include "../monitor/mon_http.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

enum { O_INTERVAL = 100, O_COUNT, O_PROM, O_JSONL, O_FSROOT, O_NO_GPU, O_WINDOW, O_NIC_GBIT, O_TTY };

static const cli_opt opts[] = {
    { "interval", 'i', "SECONDS", O_INTERVAL, 0, "seconds between samples (default 5)" },
    { "count", 'n', "N", O_COUNT, 0, "stop after N samples (default 0: until SIGTERM or SIGINT)" },
    { "prometheus", 0, "ADDR:PORT", O_PROM, 0, "serve /metrics in the Prometheus text format there (HOST:PORT, [V6]:PORT, :PORT = 127.0.0.1)" },
    { "json-lines", 0, "FILE", O_JSONL, 0, "append one JSON object per sample to FILE (- = stdout)" },
    { "tty", 0, NULL, O_TTY, 0, "print the terse line per sample even when stdout is not a terminal" },
    { "window", 0, "N", O_WINDOW, 0, "samples the alerts look back over (default 12)" },
    { "nic-gbit-s", 0, "GBIT", O_NIC_GBIT, 0, "line rate every fabric port should run at (default: the fastest peer port)" },
    { "fsroot", 0, "DIR", O_FSROOT, 0, "read /proc and /sys under DIR (a captured tree; default $CHAINPROF_FSROOT or /)" },
    { "no-gpu", 0, NULL, O_NO_GPU, 0, "do not load NVML" },
    { "quiet", 'q', NULL, CLI_O_QUIET, 0, "print errors only on stderr" },
    { "verbose", 'v', NULL, CLI_O_VERBOSE, 0, "more messages on stderr (repeatable)" },
    { "help", 'h', NULL, CLI_O_HELP, 0, "show this help" },
};

typedef struct mon_run {
    mon m;
    mon_window win;
    mon_sample cur, prev;
    bool have_prev;
    rb_opts rbo;
    mon_alert alerts[64];
    size_t n_alerts;
    cp_buf body;         /* the exposition of the latest sample */
    int jsonl_fd;        /* -1 none */
    bool tty;
} mon_run;

/* The rule book over the window: its findings become the alerts. */
static void run_alerts(mon_run *r)
{
    ev_set set;
    ev_set_init(&set);
    mon_window_evidence(&r->win, &set);
    rb_ctx *c = rb_run(&set, &r->rbo);
    r->n_alerts = 0;
    for (size_t i = 0; c && i < c->n && r->n_alerts < CP_ARRAY_LEN(r->alerts); i++) {
        mon_alert *a = &r->alerts[r->n_alerts++];
        snprintf(a->code, sizeof a->code, "%s", c->v[i].code);
        snprintf(a->layer, sizeof a->layer, "%s", cp_layer_key(c->v[i].layer));
        snprintf(a->severity, sizeof a->severity, "%s", an_severity_name(c->v[i].severity));
        snprintf(a->title, sizeof a->title, "%s", c->v[i].title);
    }
    if (c)
        rb_free(c);
    ev_set_free(&set);
}

static int write_line(int fd, const cp_buf *b)
{
    size_t off = 0;
    while (off < b->len) {
        ssize_t w = write(fd, b->data + off, b->len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        off += (size_t)w;
    }
    return 0;
}

/* Take one sample and bring every output up to date. */
static int sample_once(mon_run *r)
{
    cp_error err;
    cp_error_clear(&err);
    if (mon_take(&r->m, &r->cur, &err) < 0) {
        char msg[1024];
        cp_log_warn_once("monitor-sample", "%s", cp_error_format(&err, msg, sizeof msg));
    }
    mon_window_push(&r->win, &r->cur);
    run_alerts(r);
    cp_buf_reset(&r->body);
    mon_prom(&r->m, &r->cur, r->alerts, r->n_alerts, &r->body);
    const mon_sample *prev = r->have_prev ? &r->prev : NULL;
    cp_buf line = { 0 };
    if (r->jsonl_fd >= 0) {
        mon_json(&r->m, prev, &r->cur, r->alerts, r->n_alerts, &line);
        cp_buf_putc(&line, '\n');
        if (write_line(r->jsonl_fd, &line) < 0) {
            cp_buf_free(&line);
            cp_log_error("monitor: cannot write the JSON lines: %s", strerror(errno));
            return -1;
        }
    }
    if (r->tty) {
        cp_buf_reset(&line);
        mon_tty_line(prev, &r->cur, r->n_alerts, &line);
        fputs(cp_buf_str(&line), stdout);
        fflush(stdout);
    }
    cp_buf_free(&line);
    /* the current sample becomes the previous one: swap, so arrays are reused */
    mon_sample t = r->prev;
    r->prev = r->cur;
    r->cur = t;
    r->have_prev = true;
    return 0;
}

static int open_jsonl(const cli_ctx *ctx, const char *path)
{
    if (!path)
        return -1;
    if (strcmp(path, "-") == 0)
        return STDOUT_FILENO;
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0)
        cli_usage_error(ctx, "cannot open --json-lines %s: %s", path, strerror(errno));
    return fd;
}

/* Wait until deadline_ns, answering scrapes; false when a signal asks to stop. */
static bool wait_until(mon_run *r, mon_http *h, int sfd, int64_t deadline_ns)
{
    for (;;) {
        int64_t left_ms = (deadline_ns - cp_now_ns() + 999999) / 1000000;
        if (left_ms <= 0)
            return true;
        struct pollfd p[2] = { { .fd = sfd, .events = POLLIN }, { .fd = h ? h->fd : -1, .events = POLLIN } };
        int n = poll(p, 2, (int)(left_ms > 60000 ? 60000 : left_ms));
        if (n < 0 && errno != EINTR)
            return false;
        if (n <= 0)
            continue;
        if (p[0].revents & POLLIN) {
            struct signalfd_siginfo si;
            if (read(sfd, &si, sizeof si) > 0)
                cp_log_info("monitor: signal %u: stopping", si.ssi_signo);
            return false;
        }
        if (h && (p[1].revents & POLLIN))
            mon_http_serve_one(h, &r->body);
    }
}

static int parse_opts(cli_ctx *ctx, double *interval, long *count, long *window, double *nic)
{
    if (cli_get_double(ctx, O_INTERVAL, 5, 0.01, 86400, interval) < 0 ||
        cli_get_long(ctx, O_COUNT, 0, 0, 1000000000, count) < 0 ||
        cli_get_long(ctx, O_WINDOW, 12, 2, 100000, window) < 0 ||
        cli_get_double(ctx, O_NIC_GBIT, 0, 0, 1e6, nic) < 0)
        return CLI_EXIT_USAGE;
    if (ctx->args.n_pos)
        return cli_usage_error(ctx, "unexpected argument '%s'", ctx->args.pos[0]);
    return 0;
}

int cmd_monitor(cli_ctx *ctx)
{
    bool done;
    int rc = cli_parse_cmd(ctx, opts, CP_ARRAY_LEN(opts), false, &done);
    if (rc || done)
        return rc;
    double interval, nic;
    long count, window;
    if ((rc = parse_opts(ctx, &interval, &count, &window, &nic)))
        return rc;
    mon_run r;
    memset(&r, 0, sizeof r);
    r.rbo.nic_gbit_s = nic;
    const char *jsonl = cli_get(ctx, O_JSONL), *prom = cli_get(ctx, O_PROM);
    r.jsonl_fd = open_jsonl(ctx, jsonl);
    if (jsonl && r.jsonl_fd < 0)
        return CLI_EXIT_USAGE;
    bool jsonl_stdout = jsonl && strcmp(jsonl, "-") == 0;
    r.tty = !jsonl_stdout && (cli_has(ctx, O_TTY) || isatty(STDOUT_FILENO) || (!jsonl && !prom));
    mon_http h, *hp = NULL;
    if (prom) {
        cp_error err;
        cp_error_clear(&err);
        if (mon_http_listen(&h, prom, &err) < 0) {
            if (r.jsonl_fd > STDOUT_FILENO)
                close(r.jsonl_fd);
            return err.code == CP_ERR_USAGE ? cli_usage_error(ctx, "--prometheus %s: %s", prom, err.msg) : cli_fail(&err);
        }
        hp = &h;
        cp_log_info("monitor: serving http://%s/metrics", h.bound);
    }
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    sigprocmask(SIG_BLOCK, &sigs, NULL);
    int sfd = signalfd(-1, &sigs, SFD_CLOEXEC);
    mon_open(&r.m, cli_get(ctx, O_FSROOT), !cli_has(ctx, O_NO_GPU));
    if (!r.m.gpu_ok)
        cp_log_info("monitor: no GPU samples: %s", r.m.gpu_why);
    mon_window_init(&r.win, (size_t)window);
    int64_t next = cp_now_ns();
    rc = CLI_EXIT_OK;
    for (long taken = 0; count == 0 || taken < count; taken++) {
        if (sample_once(&r) < 0) {
            rc = CLI_EXIT_FAIL;
            break;
        }
        if (count && taken + 1 >= count)
            break;
        next += (int64_t)(interval * 1e9);
        if (!wait_until(&r, hp, sfd, next))
            break;
    }
    if (hp)
        mon_http_close(hp);
    if (sfd >= 0)
        close(sfd);
    sigprocmask(SIG_UNBLOCK, &sigs, NULL);
    if (r.jsonl_fd > STDOUT_FILENO)
        close(r.jsonl_fd);
    mon_window_free(&r.win);
    mon_sample_free(&r.cur);
    mon_sample_free(&r.prev);
    cp_buf_free(&r.body);
    mon_close(&r.m);
    return rc;
}
