/* log_prefix.c - peel launcher, NCCL, glog, Python and kernel prefixes off a
 * log line (see log_prefix.h for the formats and the time model).
 *
 * rd_prefix_parse() loops: at the current start of the line it tries each
 * prefix recogniser in turn; the first that matches consumes its prefix and
 * the loop starts again, so stacked prefixes ("[80746] [rank0]:[E321 ...] ")
 * come off in any order. Each recogniser is anchored at the current start and
 * bounded by the line length, so a line costs O(length) and never reads past
 * its end (the fuzz target checks this).
 */
#include "log_prefix.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#define NS_PER_SEC 1000000000LL

/* ns since Jan 1 of the year for a calendar date (no leap day: stamps with
 * and without a year must stay comparable; ev_base.h) */
static int64_t wall_ns(int year, int month, int day, int h, int m, int s, int64_t frac_ns)
{
    (void)year;
    return ev_time_wall_ns(month, day, h, m, s, frac_ns);
}

const char *rd_memmem(const char *hay, size_t n, const char *needle)
{
    /* glibc's memmem (two-way with SIMD first-byte scans; _GNU_SOURCE is set
     * by the build) is several times faster than a memchr+memcmp loop on
     * log lines, where the first byte of a needle is common */
    return memmem(hay, n, needle, strlen(needle));
}

int rd_scan_long(const char **p, const char *end, long *out)
{
    const char *s = *p;
    int neg = 0;
    if (s < end && (*s == '-' || *s == '+')) neg = *s++ == '-';
    if (s >= end || !isdigit((unsigned char)*s)) return -1;
    long v = 0;
    while (s < end && isdigit((unsigned char)*s)) {
        if (v < 100000000000000000L) v = v * 10 + (*s - '0'); /* saturate, input-controlled */
        s++;
    }
    *out = neg ? -v : v;
    *p = s;
    return 0;
}

long rd_long_after(const char *s, const char *end, const char *key)
{
    const char *k = rd_memmem(s, (size_t)(end - s), key);
    long v;
    if (!k) return -1;
    k += strlen(key);
    while (k < end && *k == ' ') k++;
    return rd_scan_long(&k, end, &v) == 0 ? v : -1;
}

int rd_scan_double(const char **p, const char *end, double *out)
{
    const char *s = *p;
    long ip;
    if (rd_scan_long(&s, end, &ip) != 0) return -1;
    double v = (double)(ip < 0 ? -ip : ip), scale = 0.1;
    if (s + 1 < end && *s == '.' && isdigit((unsigned char)s[1])) {
        for (s++; s < end && isdigit((unsigned char)*s); s++, scale /= 10) v += (*s - '0') * scale;
    }
    *out = ((*p)[0] == '-') ? -v : v;
    *p = s;
    return 0;
}

void rd_copy_trim(char *dst, size_t size, const char *s, size_t n)
{
    if (!size) return;
    while (n && isspace((unsigned char)*s)) s++, n--;
    while (n && isspace((unsigned char)s[n - 1])) n--;
    if (n >= size) n = size - 1;
    memcpy(dst, s, n);
    dst[n] = '\0';
}

/* ---- recognisers: each takes [s, end), returns bytes consumed or 0 ------- */

/* exactly `n` digits -> value, or -1 */
static int fixed_digits(const char *s, const char *end, int n)
{
    int v = 0;
    if (end - s < n) return -1;
    for (int i = 0; i < n; i++) {
        if (!isdigit((unsigned char)s[i])) return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

/* "HH:MM:SS[.,]frac" -> seconds of day in ns; returns length or 0 */
static size_t scan_hms(const char *s, const char *end, int64_t *ns)
{
    int h = fixed_digits(s, end, 2);
    if (h < 0 || end - s < 8 || s[2] != ':' || s[5] != ':') return 0;
    int m = fixed_digits(s + 3, end, 2), sec = fixed_digits(s + 6, end, 2);
    if (m < 0 || sec < 0 || h > 23 || m > 59 || sec > 60) return 0;
    const char *p = s + 8;
    int64_t frac = 0, scale = NS_PER_SEC / 10;
    if (p < end && (*p == '.' || *p == ',')) {
        for (p++; p < end && isdigit((unsigned char)*p); p++) {
            frac += (*p - '0') * scale;
            scale /= 10;
        }
    }
    *ns = ((int64_t)h * 3600 + m * 60 + sec) * NS_PER_SEC + frac;
    return (size_t)(p - s);
}

static int month_from_name(const char *s, const char *end)
{
    static const char names[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
    if (end - s < 3) return 0;
    for (int i = 0; i < 12; i++)
        if (memcmp(s, names + 3 * i, 3) == 0) return i + 1;
    return 0;
}

static size_t skip_spaces(const char *s, const char *end)
{
    const char *p = s;
    while (p < end && *p == ' ') p++;
    return (size_t)(p - s);
}

/* "[rank3]:" / "[default3]:" / "[1,3]<stdout>:" / "[80746] " / "[ 1843.308145] " / "[Thu Mar 21 02:07:08 2024] " */
static size_t strip_bracket(const char *s, const char *end, rd_prefix *o)
{
    if (s >= end || *s != '[') return 0;
    const char *close = memchr(s, ']', (size_t)(end - s));
    if (!close) return 0;
    const char *in = s + 1;
    size_t n = (size_t)(close - in);
    const char *after = close + 1;
    long v;
    const char *q;
    if (n > 4 && memcmp(in, "rank", 4) == 0) {
        q = in + 4;
        if (rd_scan_long(&q, close, &v) == 0 && q == close) {
            o->rank = (int)v;
            if (after < end && *after == ':') after++;
            return (size_t)(after - s);
        }
    }
    if (n > 7 && memcmp(in, "default", 7) == 0) {
        q = in + 7;
        if (rd_scan_long(&q, close, &v) == 0 && q == close) {
            o->local_rank = (int)v;
            if (after < end && *after == ':') after++;
            return (size_t)(after - s);
        }
    }
    /* c10d's glog without a time (PyTorch <= 2.1): "[E ProcessGroupNCCL.cpp:475] ",
     * "[W socket.cpp:426] " - a level letter, then file:line */
    if (n >= 5 && strchr("EWIF", in[0]) && in[1] == ' ' && isdigit((unsigned char)close[-1])) {
        const char *colon = memchr(in, ':', n);
        if (colon && colon > in + 2 && !memchr(in + 2, ' ', (size_t)(colon - in - 2))) {
            o->level = in[0];
            return (size_t)(after - s) + skip_spaces(after, end);
        }
    }
    /* Open MPI --tag-output: "[1,3]<stdout>:" / "[1,3]<stderr>:" (job, rank) */
    q = in;
    if (rd_scan_long(&q, close, &v) == 0 && q < close && *q == ',') {
        q++;
        long r;
        if (rd_scan_long(&q, close, &r) == 0 && q == close && after < end && *after == '<') {
            const char *gt = memchr(after, '>', (size_t)(end - after));
            if (gt && gt + 1 < end && gt[1] == ':' && gt - after <= 8) {
                o->rank = (int)r;
                return (size_t)(gt + 2 - s);
            }
        }
    }
    q = in + skip_spaces(in, close);
    if (q < close && isdigit((unsigned char)*q)) {
        const char *d = q;
        if (rd_scan_long(&d, close, &v) == 0) {
            if (d == close && after < end && *after == ' ' && q == in) {
                /* "[80746] ": a launcher's process tag, not a time */
                return (size_t)(after + 1 - s);
            }
            /* dmesg "[ 1843.308145]"; a boot time beyond ~292 years of
             * seconds is no dmesg stamp
             * (and v * NS_PER_SEC would overflow: fuzz_ncu found it) */
            if (d < close && *d == '.' && v >= 0 && v < INT64_MAX / NS_PER_SEC) {
                d++;
                int64_t frac = 0, scale = NS_PER_SEC / 10;
                while (d < close && isdigit((unsigned char)*d)) {
                    frac += (*d - '0') * scale;
                    scale /= 10;
                    d++;
                }
                if (d == close) {
                    o->ts.clock = EV_CLOCK_BOOT;
                    o->ts.year = 0;
                    o->ts.ns = (int64_t)v * NS_PER_SEC + frac;
                    return (size_t)(after - s) + skip_spaces(after, end);
                }
            }
        }
    }
    /* dmesg -T: "[Thu Mar 21 02:07:08 2024]" */
    if (n >= 24 && in[3] == ' ' && month_from_name(in + 4, close)) {
        int month = month_from_name(in + 4, close);
        const char *p = in + 8;
        p += skip_spaces(p, close);
        long day;
        int64_t tod;
        if (rd_scan_long(&p, close, &day) == 0 && p < close && *p == ' ') {
            size_t k = scan_hms(p + 1, close, &tod);
            long year;
            const char *y = p + 1 + k + 1;
            if (k && y < close && rd_scan_long(&y, close, &year) == 0 && day >= 1 && day <= 31) {
                o->ts.clock = EV_CLOCK_WALL;
                o->ts.year = (int16_t)year;
                o->ts.ns = wall_ns((int)year, month, (int)day, 0, 0, 0, tod);
                return (size_t)(after - s) + skip_spaces(after, end);
            }
        }
    }
    /* glog / c10: "[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607]" */
    if (n > 12 && strchr("IWEF", in[0]) && isdigit((unsigned char)in[1])) {
        const char *p = in + 1;
        long mmdd;
        int64_t tod;
        if (rd_scan_long(&p, close, &mmdd) == 0 && p < close && *p == ' ') {
            size_t k = scan_hms(p + 1, close, &tod);
            int month = (int)(mmdd / 100), day = (int)(mmdd % 100);
            if (k && month >= 1 && month <= 12 && day >= 1 && day <= 31) {
                o->level = in[0];
                o->ts.clock = EV_CLOCK_WALL;
                o->ts.year = 0;
                o->ts.ns = wall_ns(0, month, day, 0, 0, 0, tod);
                return (size_t)(after - s) + skip_spaces(after, end);
            }
        }
    }
    return 0;
}

/* "2024-03-21 02:07:08,408" / "2024-03-21T02:07:08.408Z" optionally in [] */
/* Ray's worker tag: "(pid=909608) " / "(RayWorkerWrapper pid=16018, ip=10.0.0.5) "
 * (the process, not a rank: dropped) */
static size_t strip_ray(const char *s, const char *end)
{
    if (s >= end || *s != '(')
        return 0;
    const char *close = memchr(s, ')', (size_t)(end - s) > 160 ? 160 : (size_t)(end - s));
    if (!close || close + 1 >= end || close[1] != ' ')
        return 0;
    const char *p = rd_memmem(s, (size_t)(close - s), "pid=");
    if (!p || (p != s + 1 && p[-1] != ' '))
        return 0;
    const char *q = p + 4;
    long v;
    if (rd_scan_long(&q, close, &v) != 0 || (q != close && *q != ','))
        return 0;
    return (size_t)(close + 2 - s);
}

static size_t strip_iso(const char *s, const char *end, rd_prefix *o)
{
    const char *p = s;
    int bracket = p < end && *p == '[';
    p += bracket;
    int y = fixed_digits(p, end, 4);
    if (y < 1970 || end - p < 19 || p[4] != '-' || p[7] != '-' || (p[10] != ' ' && p[10] != 'T'))
        return 0;
    int mo = fixed_digits(p + 5, end, 2), d = fixed_digits(p + 8, end, 2);
    int64_t tod;
    size_t k = scan_hms(p + 11, end, &tod);
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || !k) return 0;
    p += 11 + k;
    /* zone: Z, +hh:mm, -hhmm: an explicit offset is applied (the stamp becomes
     * UTC); a stamp without one is taken as is (see header) */
    int64_t offset_min = 0;
    if (p < end && *p == 'Z') p++;
    else if (p < end && (*p == '+' || *p == '-') && end - p >= 3 && isdigit((unsigned char)p[1])) {
        int sign = *p == '-' ? -1 : 1;
        p++;
        int hh = fixed_digits(p, end, 2), mm = 0;
        const char *z = p + 2;
        if (z < end && *z == ':') z++;
        if (hh >= 0 && fixed_digits(z, end, 2) >= 0) {
            mm = fixed_digits(z, end, 2);
            z += 2;
        }
        if (hh >= 0 && hh <= 14 && mm <= 59) offset_min = sign * (hh * 60 + mm);
        p = z;
        while (p < end && (isdigit((unsigned char)*p) || *p == ':')) p++;
    }
    if (bracket) {
        if (p >= end || *p != ']') return 0;
        p++;
    }
    o->ts.clock = EV_CLOCK_WALL;
    o->ts.year = (int16_t)y;
    o->ts.ns = wall_ns(y, mo, d, 0, 0, 0, tod) - offset_min * 60 * NS_PER_SEC;
    p += skip_spaces(p, end);
    /* Python logging separators and level: " - ERROR - ", "ERROR:", "[ERROR]" */
    static const struct { const char *w; char lv; } levels[] = {
        {"CRITICAL", 'F'}, {"ERROR", 'E'}, {"WARNING", 'W'}, {"WARN", 'W'}, {"INFO", 'I'}, {"DEBUG", 'I'}};
    for (int pass = 0; pass < 2; pass++) {
        if (end - p >= 2 && p[0] == '-' && p[1] == ' ') p += 2;
        const char *w = p + (p < end && *p == '[');
        for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++) {
            size_t L = strlen(levels[i].w);
            if ((size_t)(end - w) >= L && memcmp(w, levels[i].w, L) == 0 &&
                (w + L == end || w[L] == ' ' || w[L] == ':' || w[L] == ']')) {
                o->level = levels[i].lv;
                p = w + L;
                if (p < end && *p == ']') p++;
                if (p < end && *p == ':') p++;
                p += skip_spaces(p, end);
                break;
            }
        }
    }
    return (size_t)(p - s);
}

/* syslog: "Mar 21 02:07:08 host kernel: " -> host, time (no year) */
static size_t strip_syslog(const char *s, const char *end, rd_prefix *o)
{
    int month = month_from_name(s, end);
    if (!month || end - s < 16 || s[3] != ' ') return 0;
    const char *p = s + 4 + skip_spaces(s + 4, end);
    long day;
    int64_t tod;
    if (rd_scan_long(&p, end, &day) != 0 || day < 1 || day > 31 || p >= end || *p != ' ') return 0;
    size_t k = scan_hms(p + 1, end, &tod);
    if (!k) return 0;
    p += 1 + k;
    if (p >= end || *p != ' ') return 0;
    p++;
    const char *h = p;
    while (p < end && *p != ' ') p++;
    rd_copy_trim(o->host, sizeof o->host, h, (size_t)(p - h));
    p += skip_spaces(p, end);
    /* the program tag: "kernel: " or "prog[pid]: " */
    const char *t = p;
    while (t < end && *t != ' ' && *t != ':') t++;
    if (t + 1 < end && *t == ':' && t[1] == ' ') p = t + 2;
    o->ts.clock = EV_CLOCK_WALL;
    o->ts.year = 0;
    o->ts.ns = wall_ns(0, month, (int)day, 0, 0, 0, tod);
    return (size_t)(p - s);
}

/* NCCL: "host:pid:tid [dev] " (host may be truncated, e.g. "-worker-1") */
static size_t strip_nccl(const char *s, const char *end, rd_prefix *o)
{
    const char *sp = memchr(s, ' ', (size_t)(end - s));
    if (!sp || sp == s || sp + 3 >= end || sp[1] != '[') return 0;
    const char *c2 = NULL, *c1 = NULL;
    for (const char *p = sp - 1; p > s; p--) {
        if (*p == ':') {
            if (!c2) c2 = p;
            else {
                c1 = p;
                break;
            }
        }
    }
    if (!c1 || c1 == s) return 0;
    const char *q = c1 + 1;
    long pid, tid, dev;
    if (rd_scan_long(&q, c2, &pid) != 0 || q != c2) return 0;
    q = c2 + 1;
    if (rd_scan_long(&q, sp, &tid) != 0 || q != sp) return 0;
    q = sp + 2;
    if (rd_scan_long(&q, end, &dev) != 0 || q >= end || *q != ']') return 0;
    rd_copy_trim(o->host, sizeof o->host, s, (size_t)(c1 - s));
    o->pid = pid;
    o->tid = tid;
    o->dev = (int)dev;
    q++;
    return (size_t)(q - s) + skip_spaces(q, end);
}

/* srun --label: "3: " at the very start of the line */
static size_t strip_srun_label(const char *s, const char *end, rd_prefix *o)
{
    const char *p = s;
    long v;
    if (rd_scan_long(&p, end, &v) != 0 || p - s > 5 || s[0] == '-' || s[0] == '+') return 0;
    if (end - p < 2 || p[0] != ':' || p[1] != ' ') return 0;
    o->rank = (int)v;
    return (size_t)(p + 2 - s);
}

void rd_prefix_parse(const char *line, size_t len, rd_prefix *o)
{
    memset(o, 0, sizeof *o);
    o->rank = o->local_rank = o->dev = -1;
    o->pid = o->tid = -1;
    const char *s = line, *end = line + len;
    /* a line pasted from a Markdown quote ("> ", ">> ") or indented under
     * a heading: the quote marks go; leading blanks go only when a prefix
     * follows them (a traceback's indented frames keep their indent) */
    while (s < end && *s == '>' && (s + 1 == end || s[1] == ' ' || s[1] == '>'))
        s += s + 1 < end && s[1] == ' ' ? 2 : 1;
    if (s < end && (*s == ' ' || *s == '\t')) {
        const char *t = s;
        while (t < end && (*t == ' ' || *t == '\t'))
            t++;
        rd_prefix probe;
        memset(&probe, 0, sizeof probe);
        probe.rank = probe.local_rank = probe.dev = probe.pid = probe.tid = -1;
        /* a "[1] " process tag is no proof: indented "[1] finished collective #2" is a message */
        int bracket = strip_bracket(t, end, &probe) &&
                       (probe.rank >= 0 || probe.local_rank >= 0 || probe.ts.clock != EV_CLOCK_NONE);
        if (t < end && (bracket || strip_iso(t, end, &probe) || strip_nccl(t, end, &probe)))
            s = t;
    }
    for (int round = 0; round < 8 && s < end; round++) {
        size_t k = 0;
        ev_time outer = o->ts; /* the outermost stamp (a collector's) wins */
        if (round == 0) k = strip_srun_label(s, end, o);
        if (!k) k = strip_bracket(s, end, o);
        if (!k) k = strip_ray(s, end);
        if (!k) k = strip_iso(s, end, o);
        if (!k && o->ts.clock == EV_CLOCK_NONE) k = strip_syslog(s, end, o);
        if (!k && o->pid < 0) k = strip_nccl(s, end, o);
        if (!k) break;
        if (outer.clock != EV_CLOCK_NONE) o->ts = outer;
        s += k;
    }
    /* "[Rank 3] ..." / "[PG 1 Rank 3] ..." at the start of a PyTorch message
     * names the rank but is part of the message: keep it, record the rank. */
    if (o->rank < 0 && s < end && *s == '[') {
        const char *close = memchr(s, ']', (size_t)(end - s));
        const char *r = close ? rd_memmem(s, (size_t)(close - s), "Rank ") : NULL;
        if (r) {
            const char *q = r + 5;
            long v;
            if (rd_scan_long(&q, close, &v) == 0 && q == close) o->rank = (int)v;
        }
    }
    o->msg = s;
    o->msg_len = (size_t)(end - s);
}

void rd_keyset_init(rd_keyset *ks, const char *const *keys, int n)
{
    memset(ks, 0, sizeof *ks);
    if (n > 32) n = 32;
    for (int k = 0; k < n; k++) {
        size_t L = strlen(keys[k]);
        if (L < 3) continue; /* the tables look at three bytes */
        ks->keys[ks->n] = keys[k];
        ks->lens[ks->n] = (uint8_t)(L > 255 ? 255 : L);
        ks->t0[(uint8_t)keys[k][0]] |= 1u << ks->n;
        ks->t1[(uint8_t)keys[k][1]] |= 1u << ks->n;
        ks->t2[(uint8_t)keys[k][2]] |= 1u << ks->n;
        ks->n++;
    }
}

uint32_t rd_keyset_scan(const rd_keyset *ks, const char *s, size_t n)
{
    uint32_t found = 0;
    const uint8_t *u = (const uint8_t *)s;
    for (size_t i = 0; i + 2 < n; i++) {
        uint32_t m = ks->t0[u[i]];
        if (!m) continue;
        m &= ks->t1[u[i + 1]] & ks->t2[u[i + 2]] & ~found;
        while (m) {
            int k = __builtin_ctz(m);
            m &= m - 1;
            if (i + ks->lens[k] <= n && memcmp(s + i, ks->keys[k], ks->lens[k]) == 0) found |= 1u << k;
        }
    }
    return found;
}

/* digits right after `key` (any case; optionally after one of "-_."), as a
 * rank; the first such match in base counts */
static int rank_after(const char *base, const char *key)
{
    for (const char *k = strcasestr(base, key); k; k = strcasestr(k + 1, key)) {
        const char *p = k + strlen(key);
        if (*p == '-' || *p == '_' || *p == '.') p++;
        if (!isdigit((unsigned char)*p)) continue;
        long long v = 0;
        while (isdigit((unsigned char)*p) && v <= INT32_MAX) v = v * 10 + (*p++ - '0');
        return v <= INT32_MAX ? (int)v : -1;
    }
    return -1;
}

int rd_rank_from_name(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    int r = rank_after(base, "rank");
    if (r < 0) r = rank_after(base, "worker");
    if (r >= 0 || base == path) return r;
    /* torchrun --log-dir: <dir>/attempt_0/<local_rank>/{stdout,stderr}.log */
    if (strcmp(base, "stdout.log") && strcmp(base, "stderr.log") && strcmp(base, "error.json")) return -1;
    const char *end = base - 1, *start = end;
    while (start > path && start[-1] != '/') start--;
    if (start == end) return -1;
    long v = 0;
    for (const char *p = start; p < end; p++) {
        if (!isdigit((unsigned char)*p) || v > 100000) return -1;
        v = v * 10 + (*p - '0');
    }
    return (int)v;
}
