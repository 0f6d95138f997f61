/* evidence.c - the evidence reader table and the reading loop (see
 * evidence.h for the contract).
 *
 * Reading: every line is split off a 1 MiB window (no whole-file buffers;
 * plain, gzip and zstd through cp_src), its prefix parsed once, and handed
 * to every active reader of the input. An input a whole-file reader claims
 * (by its head or its name) is read into one buffer for it alone (bounded
 * by RD_EV_MAX_WHOLE_BYTES), or not read at all for RD_EV_NO_DATA. Files are read in parallel, each into
 * its own slot, and appended to the set in argument order, so the set does
 * not depend on the thread count.
 */
#include "evidence.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../base/buf.h"
#include "../base/par.h"
#include "../base/src.h"
#include "../base/util.h"
#include "rd_text.h"

#define RD_EV(kind, p, flags) RD_EV_DECLARE(p);
#define RD_EV_FILE(kind, p, flags, ext) RD_EV_FILE_DECLARE(p);
#include "evidence.def"
#undef RD_EV
#undef RD_EV_FILE

static const rd_ev_reader k_readers[] = {
#define RD_EV(kind, p, flags) {EV_##kind, #p, flags, rd_##p##_sniff, rd_##p##_begin, rd_##p##_line, rd_##p##_end, NULL, NULL},
#define RD_EV_FILE(kind, p, flags, ext) {EV_##kind, #p, flags, rd_##p##_sniff, NULL, NULL, NULL, rd_##p##_file, ext},
#include "evidence.def"
#undef RD_EV
#undef RD_EV_FILE
};
enum { N_READERS = sizeof k_readers / sizeof k_readers[0] };

#define READ_CHUNK (1 << 20)

const rd_ev_reader *rd_ev_readers(size_t *n)
{
    *n = N_READERS;
    return k_readers;
}

const rd_ev_reader *rd_ev_reader_of(ev_kind kind)
{
    for (size_t i = 0; i < N_READERS; i++)
        if (k_readers[i].kind == kind)
            return &k_readers[i];
    return NULL;
}

const rd_ev_reader *rd_ev_detect(const char *head, size_t n, int *confidence)
{
    const rd_ev_reader *best = NULL;
    int best_score = 0;
    if (n > RD_SNIFF_BYTES)
        n = RD_SNIFF_BYTES;
    for (size_t i = 0; i < N_READERS; i++) {
        int s = k_readers[i].sniff(head, n);
        if (s > best_score) {
            best_score = s;
            best = &k_readers[i];
        }
    }
    if (confidence)
        *confidence = best_score;
    return best_score >= RD_EV_MIN_CONFIDENCE ? best : NULL;
}

/* ---- one input: the active readers and the line loop ---- */

typedef struct slot {
    char *path;
    long long bytes;
    long lines;
    bool truncated;
    int file_rank;        /* rank from the file name for untagged lines; -1 */
    long file_rank_lines; /* lines that took it */
    long long_lines;      /* lines cut at RD_EV_MAX_LINE_BYTES */
    long junk_lines;      /* binary lines before the head the sniffers judged */
    ev_time last_ts;      /* time of the last timed line */
    bool started;
    int whole;            /* the whole-file reader that claimed the input; -1 none */
    cp_buf data;          /* its bytes (not for RD_EV_NO_DATA) */
    bool too_big;         /* past RD_EV_MAX_WHOLE_BYTES: not read */
    void *st[N_READERS];  /* reading state of each active reader; NULL inactive */
    void *facts[N_READERS];
    diag_set *diag[N_READERS]; /* damage of each active reader; freed at the end when none */
    int rc;
    cp_error err;
} slot;

static bool has_suffix(const char *path, const char *ext)
{
    size_t n = strlen(path), e = strlen(ext);
    return e && n >= e && strcasecmp(path + n - e, ext) == 0;
}

/* The whole-file reader that claims an input by its name, or -1. */
static int claim_by_name(const char *path)
{
    for (size_t i = 0; i < N_READERS; i++)
        if (k_readers[i].file && k_readers[i].ext && has_suffix(path, k_readers[i].ext))
            return (int)i;
    return -1;
}

/* A whole-file reader that claims the input by its name or its raw head
 * (binary formats: judged before any junk is skipped) alone reads it. */
static bool start_whole(slot *sl, const char *head, size_t n)
{
    if (n > RD_SNIFF_BYTES)
        n = RD_SNIFF_BYTES;
    sl->whole = claim_by_name(sl->path);
    for (size_t i = 0; i < N_READERS && sl->whole < 0; i++)
        if (k_readers[i].file && k_readers[i].sniff(head, n) >= RD_EV_MIN_CONFIDENCE)
            sl->whole = (int)i;
    if (sl->whole < 0)
        return false;
    sl->started = true;
    sl->diag[sl->whole] = cp_xmalloc(sizeof *sl->diag[sl->whole]);
    diag_init(sl->diag[sl->whole]);
    return true;
}

/* The line readers: those that scan everything and those whose sniff
 * recognises the head (or the one that wants the input alone). */
static void start_lines(slot *sl, const char *head, size_t n)
{
    if (n > RD_SNIFF_BYTES)
        n = RD_SNIFF_BYTES;
    int score[N_READERS];
    size_t alone = N_READERS;
    sl->started = true;
    for (size_t i = 0; i < N_READERS; i++) {
        score[i] = k_readers[i].file ? 0 : k_readers[i].sniff(head, n);
        if ((k_readers[i].flags & RD_EV_ALONE) && score[i] >= RD_EV_MIN_CONFIDENCE)
            alone = i;
    }
    for (size_t i = 0; i < N_READERS; i++) {
        if (k_readers[i].file)
            continue;
        bool on = alone < N_READERS ? i == alone
                                    : (k_readers[i].flags & RD_EV_SCAN) || score[i] >= RD_EV_MIN_CONFIDENCE;
        if (on) {
            sl->st[i] = k_readers[i].begin(sl->path);
            sl->diag[i] = cp_xmalloc(sizeof *sl->diag[i]);
            diag_init(sl->diag[i]);
        }
    }
}

static void start(slot *sl, const char *head, size_t n)
{
    if (!start_whole(sl, head, n))
        start_lines(sl, head, n);
}

static void feed(slot *sl, const char *line, size_t len, long no)
{
    sl->lines++;
    if (len >= 2 && line[0] == '#' && line[1] == '@')
        return; /* provenance notes of the sample corpus: no tool prints them */
    rd_prefix pfx;
    rd_prefix_parse(line, len, &pfx);
    /* an untimed line (a traceback, an NCCL line) happened no earlier than
     * the last timed line of its input: it inherits that time for ordering */
    if (pfx.ts.clock == EV_CLOCK_NONE)
        pfx.ts = sl->last_ts;
    else
        sl->last_ts = pfx.ts;
    /* an untagged line of "rank3.log" is rank 3's */
    if (pfx.rank < 0 && pfx.local_rank < 0 && sl->file_rank >= 0) {
        pfx.rank = sl->file_rank;
        sl->file_rank_lines++;
    }
    rd_line ln = {line, len, no, &pfx};
    for (size_t i = 0; i < N_READERS; i++)
        if (sl->st[i])
            k_readers[i].line(sl->st[i], &ln);
}

static void finish(slot *sl)
{
    if (!sl->started)
        start(sl, "", 0);
    if (sl->whole >= 0) {
        int w = sl->whole;
        if (sl->too_big)
            diag_count(sl->diag[w], DIAG_LIMIT_REACHED, sl->path, sl->bytes);
        else
            sl->facts[w] = k_readers[w].file(sl->path, (k_readers[w].flags & RD_EV_NO_DATA) ? NULL : sl->data.data ? sl->data.data : "",
                                             sl->data.len, sl->diag[w]);
        cp_buf_free(&sl->data);
        if (diag_total(sl->diag[w]) == 0) {
            free(sl->diag[w]);
            sl->diag[w] = NULL;
        }
        return;
    }
    for (size_t i = 0; i < N_READERS; i++)
        if (sl->st[i]) {
            sl->facts[i] = k_readers[i].end(sl->st[i], sl->diag[i]);
            sl->st[i] = NULL;
            if (diag_total(sl->diag[i]) == 0) { /* keep memory for damage only */
                free(sl->diag[i]);
                sl->diag[i] = NULL;
            }
        }
}

/* Lines of buf[0..len); the incomplete last one stays unless final. */
static size_t feed_lines(slot *sl, const char *buf, size_t len, bool final, long *no)
{
    const char *p = buf, *end = buf + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl && !final)
            break;
        const char *e = nl ? nl : end;
        size_t n = (size_t)(e - p);
        if (n && p[n - 1] == '\r')
            n--;
        if (n > RD_EV_MAX_LINE_BYTES) { /* the readers see the head only */
            sl->long_lines++;
            n = RD_EV_MAX_LINE_BYTES;
        }
        feed(sl, p, n, ++*no);
        p = nl ? nl + 1 : end;
    }
    return (size_t)(p - buf);
}

/* ---- the head the sniffers judge ----
 *
 * The sniffers recognise a format by the first RD_SNIFF_BYTES of text. A
 * first line of 10 MiB or a block of binary before a valid log (a crash's
 * NUL fill, bytes of something else concatenated in front) used to fill that
 * window, and a valid file was "not recognised" (issue 21). So the lines
 * before the readers start are scanned first: over-long lines (counted
 * limit_reached) and binary lines (counted unparsed_line) are left out of the
 * sniff text, text lines go in, until it holds RD_SNIFF_BYTES, the input
 * ends, or HEAD_SCAN_MAX_BYTES were scanned. The readers then get those lines
 * in order with a skipped line as an empty one, so line numbers stay true. */

#define HEAD_SCAN_MAX_BYTES (64ll << 20) /* junk skipped before giving up on finding text */
#define HEAD_LINES_MAX_BYTES (1 << 20)   /* the scanned lines kept for the readers */

typedef struct head_scan {
    cp_buf sniff;       /* text lines only */
    cp_buf lines;       /* every line scanned, a skipped one empty */
    long long scanned;  /* input bytes consumed */
    bool in_long;       /* inside an over-long line, up to its newline */
    bool looked;        /* the raw head was offered to the whole-file readers */
    bool done;
} head_scan;

/* A line of binary: a NUL, or control characters (not tab, CR, form feed,
 * ESC) at more than one byte in 16 (a stray one in a log line is text). */
static bool binary_line(const char *p, size_t n)
{
    size_t ctl = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if (!c)
            return true;
        ctl += (c < 0x20 && c != '\t' && c != '\r' && c != '\f' && c != 0x1b) || c == 0x7f;
    }
    return ctl * 16 > n;
}

static void scan_line(slot *sl, head_scan *h, const char *p, size_t n)
{
    if (n >= RD_EV_MAX_LINE_BYTES) {
        sl->long_lines++;
    } else if (binary_line(p, n)) {
        sl->junk_lines++;
    } else {
        cp_buf_append(&h->sniff, p, n);
        cp_buf_putc(&h->sniff, '\n');
        cp_buf_append(&h->lines, p, n);
    }
    cp_buf_putc(&h->lines, '\n');
    if (h->sniff.len >= RD_SNIFF_BYTES || h->lines.len >= HEAD_LINES_MAX_BYTES)
        h->done = true;
}

/* Scan whole lines of buf[0..len) (an unfinished short last line stays
 * unless final; an over-long one is consumed). Returns the bytes used. */
static size_t scan_head(slot *sl, head_scan *h, const char *buf, size_t len, bool final)
{
    const char *p = buf, *end = buf + len;
    while (p < end && !h->done) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (h->in_long) { /* counted when it began */
            if (!nl) {
                p = end;
                break;
            }
            h->in_long = false;
            cp_buf_putc(&h->lines, '\n');
            p = nl + 1;
            continue;
        }
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        if (!nl && n >= RD_EV_MAX_LINE_BYTES && !final) {
            sl->long_lines++;
            h->in_long = true;
            p = end;
            break;
        }
        if (!nl && !final)
            break;
        scan_line(sl, h, p, n && p[n - 1] == '\r' ? n - 1 : n);
        p = nl ? nl + 1 : end;
    }
    h->scanned += p - buf;
    if (final || h->scanned >= HEAD_SCAN_MAX_BYTES)
        h->done = true;
    return (size_t)(p - buf);
}

/* The scan is over: the line readers start on the sniff text and read the
 * scanned lines. Returns whether the input continues inside a long line. */
static bool head_flush(slot *sl, head_scan *h, long *no)
{
    start_lines(sl, h->sniff.data ? h->sniff.data : "", h->sniff.len);
    feed_lines(sl, h->lines.data ? h->lines.data : "", h->lines.len, true, no);
    cp_buf_free(&h->sniff);
    cp_buf_free(&h->lines);
    if (h->in_long) { /* the line in progress is one */
        sl->lines++;
        ++*no;
    }
    return h->in_long;
}

/* A whole-file reader's input: its bytes into sl->data (bounded). */
static int read_whole(slot *sl, cp_src *src, const char *head, size_t n, cp_error *err)
{
    if (k_readers[sl->whole].flags & RD_EV_NO_DATA)
        return 0;
    cp_buf_append(&sl->data, head, n);
    char chunk[1 << 16];
    for (;;) {
        ssize_t got = cp_src_read(src, chunk, sizeof chunk, err);
        if (got <= 0)
            return (int)got;
        sl->bytes += got;
        if (sl->too_big || (long long)(sl->data.len + (size_t)got) > RD_EV_MAX_WHOLE_BYTES) {
            sl->too_big = true;
            cp_buf_free(&sl->data);
            continue; /* count the bytes, keep none */
        }
        cp_buf_append(&sl->data, chunk, (size_t)got);
    }
}

/* Stream one file through a fixed window. Touches only sl. */
static int read_path(slot *sl, cp_error *err)
{
    int w = claim_by_name(sl->path);
    if (w >= 0 && (k_readers[w].flags & RD_EV_NO_DATA)) { /* the reader opens it */
        start(sl, "", 0);
        return 0;
    }
    cp_src *src;
    int rc = cp_src_open(&src, sl->path, err);
    if (rc < 0)
        return rc;
    char *win = cp_xmalloc(READ_CHUNK + RD_EV_MAX_LINE_BYTES);
    size_t have = 0;
    long no = 0;
    bool skipping = false;
    head_scan h = { CP_BUF_INIT, CP_BUF_INIT, 0, false, false, false };
    for (;;) {
        ssize_t got = cp_src_read(src, win + have, READ_CHUNK, err);
        if (got < 0) {
            rc = (int)got;
            if (!sl->started && h.looked) { /* what decoded before the damage is read */
                scan_head(sl, &h, win, have, true);
                head_flush(sl, &h, &no);
            }
            break;
        }
        sl->bytes += got;
        size_t len = have + (size_t)got;
        if (!h.looked) {
            h.looked = true;
            if (start_whole(sl, win, len)) {
                rc = got > 0 ? read_whole(sl, src, win, (size_t)got, err) : 0;
                break;
            }
        }
        if (!sl->started) {
            size_t used = scan_head(sl, &h, win, len, got == 0);
            len -= used;
            memmove(win, win + used, len);
            if (!h.done) {
                have = len;
                continue;
            }
            skipping = head_flush(sl, &h, &no);
        }
        if (skipping) { /* the rest of an over-long line */
            const char *nl = memchr(win, '\n', len);
            if (!nl) {
                have = 0;
                if (got == 0)
                    break;
                continue;
            }
            len -= (size_t)(nl + 1 - win);
            memmove(win, nl + 1, len);
            skipping = false;
        }
        size_t used = feed_lines(sl, win, len, got == 0, &no);
        have = len - used;
        if (have)
            memmove(win, win + used, have);
        if (have >= RD_EV_MAX_LINE_BYTES) { /* cut: feed the head, skip to the newline */
            sl->long_lines++;
            feed(sl, win, RD_EV_MAX_LINE_BYTES, ++no);
            have = 0;
            skipping = true;
        }
        if (got == 0)
            break;
    }
    sl->truncated = cp_src_truncated(src);
    free(win);
    cp_src_close(src);
    return rc;
}

static void slot_init(slot *sl, const char *path)
{
    memset(sl, 0, sizeof *sl);
    sl->whole = -1;
    sl->path = cp_xstrdup(path);
    sl->file_rank = rd_rank_from_name(path);
}

/* Move a finished slot into the set. */
static void commit(ev_set *s, slot *sl)
{
    uint32_t in = ev_set_add_input(s, sl->path);
    ev_input *inp = &s->inputs[in];
    inp->bytes = sl->bytes;
    inp->lines = sl->lines;
    inp->truncated = sl->truncated;
    diag_set d;
    diag_init(&d);
    if (sl->long_lines)
        diag_count_n(&d, DIAG_LIMIT_REACHED, (uint64_t)sl->long_lines, sl->path, -1);
    if (sl->junk_lines)
        diag_count_n(&d, DIAG_UNPARSED_LINE, (uint64_t)sl->junk_lines, sl->path, -1);
    if (sl->truncated)
        diag_count(&d, DIAG_TRUNCATED_FILE, sl->path, sl->bytes);
    for (size_t i = 0; i < N_READERS; i++) {
        if (sl->facts[i])
            ev_set_add_file(s, in, k_readers[i].kind, sl->facts[i], sl->diag[i]);
        /* else: a reader that found none of its kind was not reading its
         * format; what it could not parse is not damage */
        free(sl->diag[i]);
        sl->diag[i] = NULL;
    }
    bool found = s->inputs[in].kinds != 0;
    if (found && sl->file_rank_lines)
        diag_count(&d, DIAG_RANK_FROM_FILENAME, sl->path, -1);
    ev_input_diag(s, in, &d);
    free(sl->path);
    sl->path = NULL;
}

typedef struct read_job {
    slot *slots;
} read_job;

static void read_one(void *ctx, size_t i)
{
    slot *sl = &((read_job *)ctx)->slots[i];
    cp_error_clear(&sl->err);
    sl->rc = read_path(sl, &sl->err);
    finish(sl);
}

int rd_ev_read_files(ev_set *s, char *const *paths, size_t n, int nthreads, long *dropped, cp_error *err)
{
    size_t room = s->n_inputs < RD_EV_MAX_INPUTS ? RD_EV_MAX_INPUTS - s->n_inputs : 0;
    size_t m = n < room ? n : room;
    if (dropped)
        *dropped = (long)(n - m);
    if (!m)
        return 0;
    slot *slots = cp_xcalloc(m, sizeof *slots);
    for (size_t i = 0; i < m; i++)
        slot_init(&slots[i], paths[i]);
    read_job job = {slots};
    cp_par_for(m, nthreads, read_one, &job);
    int rc = 0;
    for (size_t i = 0; i < m; i++) {
        if (slots[i].rc < 0 && !rc) {
            rc = slots[i].rc;
            if (err)
                *err = slots[i].err;
        }
        commit(s, &slots[i]);
    }
    free(slots);
    return rc;
}

void rd_ev_read_buffer(ev_set *s, const char *name, const char *buf, size_t len)
{
    slot *sl = cp_xmalloc(sizeof *sl);
    slot_init(sl, name);
    sl->bytes = (long long)len;
    if (start_whole(sl, buf, len)) {
        if ((long long)len > RD_EV_MAX_WHOLE_BYTES)
            sl->too_big = true;
        else
            cp_buf_append(&sl->data, buf, len);
    } else { /* as read_path does, in one window */
        long no = 0;
        head_scan h = { CP_BUF_INIT, CP_BUF_INIT, 0, false, true, false };
        size_t used = scan_head(sl, &h, buf, len, true);
        if (head_flush(sl, &h, &no)) {
            const char *nl = memchr(buf + used, '\n', len - used);
            used = nl ? (size_t)(nl + 1 - buf) : len;
        }
        feed_lines(sl, buf + used, len - used, true, &no);
    }
    finish(sl);
    commit(s, sl);
    free(sl);
}

int rd_ev_parse(ev_kind kind, const char *data, size_t len, const char *name, void **facts, diag_set *diag,
                cp_error *err)
{
    *facts = NULL;
    const rd_ev_reader *r = rd_ev_reader_of(kind);
    if (!r)
        return cp_error_set(err, CP_ERR_INTERNAL, name, 0, 0, -1, "no reader for evidence kind %d", (int)kind);
    diag_set local;
    diag_init(&local);
    if (r->file) {
        *facts = r->file(name ? name : "", (r->flags & RD_EV_NO_DATA) ? NULL : data, len, &local);
        goto done;
    }
    void *st = r->begin(name ? name : "");
    rd_lines it;
    rd_lines_init(&it, data, len);
    const char *line;
    size_t n;
    ev_time none = {0, 0, EV_CLOCK_NONE};
    ev_time last = none;
    while (rd_lines_next(&it, &line, &n)) {
        rd_prefix pfx;
        rd_prefix_parse(line, n, &pfx);
        if (pfx.ts.clock == EV_CLOCK_NONE)
            pfx.ts = last;
        else
            last = pfx.ts;
        rd_line ln = {line, n, (long)it.lineno, &pfx};
        r->line(st, &ln);
    }
    *facts = r->end(st, &local);
done:
    if (diag)
        diag_merge(diag, &local);
    if (!*facts)
        return cp_error_set(err, CP_ERR_FORMAT, name, 0, 0, -1, "input not recognised: no %s found",
                            ev_kind_title(kind));
    return 0;
}
