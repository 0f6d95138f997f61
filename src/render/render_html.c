/* render_html.c - the report as one self-contained HTML page.
 *
 * Design
 * - Readable without JavaScript and without the network: every chart is
 *   inline SVG drawn here from the report tree, styles are inline, there is
 *   no external resource of any kind (the favicon is a data: URL so a
 *   browser does not go looking for one).
 * - Charts (each an <svg> with a stable id, so tests can find them):
 *   chart-layers (per-rank stacked exposed time by layer), chart-slowest-step
 *   (the slowest step as a timeline across ranks, coloured by layer),
 *   chart-collectives (p50 busbw per collective row against the expected
 *   busbw), chart-heatmap (rank x step, step time), chart-comm-matrix
 *   (bytes between rank pairs, comm_matrix.pairs), chart-roofline (the
 *   kernels Nsight Compute profiled on their roofline, when given). Findings come first,
 *   with their evidence, then the charts, then every top-level table.
 * - Like every writer it renders only the report: the numbers are the ones
 *   in the JSON, which is embedded verbatim in a
 *   <script type="application/json" id="chainprof-report"> element ("</" is
 *   escaped as "<\/" so the data cannot close the element).
 * - Charts degrade to a one-line note when the report lacks their data.
 */
#include "render.h"
#include "../base/util.h"
#include "../model/vocab.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N_LAYERS CP_LAYER__COUNT
/* colours by cp_layer (model/vocab.h), Okabe-Ito palette; idle grey */
static const char *const layer_colors[N_LAYERS] = { "#e69f00", "#009e73", "#56b4e9", "#d55e00", "#cc79a7", "#c8c8c8" };

/* ---- small helpers ---- */

static void esc(cp_buf *b, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '<': cp_buf_puts(b, "&lt;"); break;
        case '>': cp_buf_puts(b, "&gt;"); break;
        case '&': cp_buf_puts(b, "&amp;"); break;
        case '"': cp_buf_puts(b, "&quot;"); break;
        default: cp_buf_putc(b, *s);
        }
    }
}

/* Child by a dotted path relative to n ("layers.host.exposed_ns", "0.id"). */
static const rep_node *at(const rep_node *n, const char *path)
{
    char key[64];
    while (n && *path) {
        size_t len = strcspn(path, ".");
        if (len >= sizeof key)
            return NULL;
        memcpy(key, path, len);
        key[len] = 0;
        path += len + (path[len] == '.');
        if (n->type == REP_ARR && key[0] >= '0' && key[0] <= '9') {
            long idx = strtol(key, NULL, 10);
            const rep_node *c = n->first;
            while (c && idx-- > 0)
                c = c->next;
            n = c;
        } else {
            n = rep_child(n, key);
        }
    }
    return n;
}

static double num_at(const rep_node *n, const char *path)
{
    const rep_node *x = at(n, path);
    if (!x)
        return NAN;
    if (x->type == REP_INT)
        return (double)x->v.i;
    if (x->type == REP_NUM)
        return x->v.d;
    return NAN;
}

static const char *str_at(const rep_node *n, const char *path)
{
    const rep_node *x = at(n, path);
    return x && x->type == REP_STR ? x->v.s : NULL;
}

static void fmt_ns(cp_buf *b, double ns)
{
    if (ns >= 1e9)
        cp_buf_printf(b, "%.2f s", ns / 1e9);
    else if (ns >= 1e6)
        cp_buf_printf(b, "%.2f ms", ns / 1e6);
    else
        cp_buf_printf(b, "%.1f us", ns / 1e3);
}

static void legend(cp_buf *b)
{
    cp_buf_puts(b, "<p class=\"legend\">");
    for (int k = 0; k < N_LAYERS; k++)
        cp_buf_printf(b, "<span><i style=\"background:%s\"></i>%s</span> ", layer_colors[k], cp_layer_key((cp_layer)k));
    cp_buf_puts(b, "</p>\n");
}

static void svg_open(cp_buf *b, const char *id, const char *label, int w, int h)
{
    cp_buf_printf(b,
                  "<svg id=\"%s\" class=\"chart\" role=\"img\" aria-label=\"%s\" xmlns=\"http://www.w3.org/2000/svg\" "
                  "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">\n",
                  id, label, w, h, w, h);
}

static void note(cp_buf *b, const char *id, const char *what)
{
    cp_buf_printf(b, "<p class=\"note\" id=\"%s\">%s</p>\n", id, what);
}

/* ---- charts ---- */

#define CW 900 /* chart width */
#define LX 90  /* left label column */

static void chart_layers(cp_buf *b, const rep_node *ranks)
{
    cp_buf_puts(b, "<h2>Where the time goes, per rank</h2>\n");
    size_t n = ranks ? ranks->n_children : 0;
    double maxt = 0;
    for (const rep_node *r = ranks ? ranks->first : NULL; r; r = r->next) {
        double t = 0;
        for (int k = 0; k < N_LAYERS; k++) {
            char p[48];
            snprintf(p, sizeof p, "layers.%s.exposed_ns", cp_layer_key((cp_layer)k));
            double v = num_at(r, p);
            t += isfinite(v) ? v : 0;
        }
        maxt = fmax(maxt, t);
    }
    if (n == 0 || maxt <= 0) {
        note(b, "chart-layers", "no layer breakdown in this report");
        return;
    }
    legend(b);
    int bh = n > 64 ? 6 : 16, h = (int)n * (bh + 4) + 30;
    svg_open(b, "chart-layers", "exposed time per rank by layer", CW, h);
    int y = 4;
    for (const rep_node *r = ranks->first; r; r = r->next, y += bh + 4) {
        double x = LX;
        cp_buf_printf(b, "<text x=\"%d\" y=\"%d\" class=\"lbl\">rank %.0f</text>\n", LX - 6, y + bh - 3,
                      num_at(r, "rank"));
        for (int k = 0; k < N_LAYERS; k++) {
            char p[48];
            snprintf(p, sizeof p, "layers.%s.exposed_ns", cp_layer_key((cp_layer)k));
            double v = num_at(r, p);
            if (!isfinite(v) || v <= 0)
                continue;
            double w = v / maxt * (CW - LX - 10);
            cp_buf_printf(b, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"><title>rank %.0f %s ",
                          x, y, w, bh, layer_colors[k], num_at(r, "rank"), cp_layer_key((cp_layer)k));
            fmt_ns(b, v);
            cp_buf_puts(b, "</title></rect>\n");
            x += w;
        }
    }
    cp_buf_printf(b, "<text x=\"%d\" y=\"%d\" class=\"axis\">0</text><text x=\"%d\" y=\"%d\" class=\"axis end\">", LX,
                  h - 6, CW - 10, h - 6);
    fmt_ns(b, maxt);
    cp_buf_puts(b, "</text>\n</svg>\n");
}

static void chart_slowest(cp_buf *b, const rep_node *ss)
{
    cp_buf_puts(b, "<h2>The slowest step, across ranks</h2>\n");
    const rep_node *ranks = at(ss, "ranks");
    double dur = num_at(ss, "dur_ns");
    if (!ranks || !ranks->n_children || !(dur > 0)) {
        note(b, "chart-slowest-step", "no step timeline in this report");
        return;
    }
    double id = num_at(ss, "id");
    cp_buf_puts(b, "<p>step ");
    if (isfinite(id))
        cp_buf_printf(b, "%.0f", id);
    else
        cp_buf_puts(b, "(whole trace)");
    cp_buf_puts(b, ", longest rank ");
    fmt_ns(b, dur);
    cp_buf_puts(b, "</p>\n");
    legend(b);
    size_t n = ranks->n_children;
    int bh = n > 64 ? 6 : 16, h = (int)n * (bh + 4) + 30;
    svg_open(b, "chart-slowest-step", "timeline of the slowest step by layer", CW, h);
    int y = 4;
    double scale = (CW - LX - 10) / dur;
    for (const rep_node *r = ranks->first; r; r = r->next, y += bh + 4) {
        cp_buf_printf(b, "<text x=\"%d\" y=\"%d\" class=\"lbl\">rank %.0f</text>\n", LX - 6, y + bh - 3,
                      num_at(r, "rank"));
        const rep_node *seg = at(r, "segments");
        if (!seg || seg->type != REP_JSON)
            continue;
        /* [[t,d,l],...] written by an_layers: read the numbers in triples */
        const char *p = seg->v.s;
        double v[3];
        int k = 0;
        while (*p) {
            if ((*p >= '0' && *p <= '9') || *p == '-') {
                char *e;
                v[k++] = strtod(p, &e);
                p = e;
                if (k == 3) {
                    int l = (int)v[2];
                    if (l >= 0 && l < N_LAYERS && v[1] > 0)
                        cp_buf_printf(b, "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"%s\"/>\n",
                                      LX + v[0] * scale, y, fmax(v[1] * scale, 0.3), bh, layer_colors[l]);
                    k = 0;
                }
            } else {
                p++;
            }
        }
    }
    cp_buf_printf(b, "<text x=\"%d\" y=\"%d\" class=\"axis\">0</text><text x=\"%d\" y=\"%d\" class=\"axis end\">", LX,
                  h - 6, CW - 10, h - 6);
    fmt_ns(b, dur);
    cp_buf_puts(b, "</text>\n</svg>\n");
}

static void chart_collectives(cp_buf *b, const rep_node *coll)
{
    cp_buf_puts(b, "<h2>Collective bus bandwidth against expected</h2>\n");
    size_t n = coll ? coll->n_children : 0;
    double mx = 0;
    for (const rep_node *r = n ? coll->first : NULL; r; r = r->next) {
        double a = num_at(r, "p50_busbw_gbps"), e = num_at(r, "expected_busbw_gbps");
        if (isfinite(a))
            mx = fmax(mx, a);
        if (isfinite(e))
            mx = fmax(mx, e);
    }
    if (n == 0 || mx <= 0) {
        note(b, "chart-collectives", "no collectives with arguments in this report");
        return;
    }
    cp_buf_puts(b, "<p class=\"legend\"><span><i style=\"background:#0072b2\"></i>p50 busbw</span> "
                   "<span><i style=\"background:#000\"></i>expected</span></p>\n");
    int bh = 16, lx = 260, h = (int)n * (bh + 6) + 30;
    svg_open(b, "chart-collectives", "collective busbw against expected", CW, h);
    int y = 4;
    for (const rep_node *r = coll->first; r; r = r->next, y += bh + 6) {
        double a = num_at(r, "p50_busbw_gbps"), e = num_at(r, "expected_busbw_gbps"), by = num_at(r, "bytes");
        cp_buf_printf(b, "<text x=\"%d\" y=\"%d\" class=\"lbl\">", lx - 6, y + bh - 3);
        esc(b, str_at(r, "op"));
        cp_buf_puts(b, " ");
        esc(b, str_at(r, "scope"));
        if (isfinite(by))
            cp_buf_printf(b, " %.3g MB", by / 1e6);
        cp_buf_puts(b, "</text>\n");
        double scale = (CW - lx - 60) / mx;
        if (isfinite(a))
            cp_buf_printf(b,
                          "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"#0072b2\"><title>%.2f "
                          "GB/s</title></rect><text x=\"%.1f\" y=\"%d\" class=\"val\">%.1f</text>\n",
                          lx, y, a * scale, bh, a, lx + a * scale + 4, y + bh - 3, a);
        if (isfinite(e))
            cp_buf_printf(b, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"#000\" stroke-width=\"2\"/>\n",
                          lx + e * scale, lx + e * scale, y - 2, y + bh + 2);
    }
    cp_buf_printf(b, "<text x=\"%d\" y=\"%d\" class=\"axis\">0 GB/s</text><text x=\"%d\" y=\"%d\" "
                     "class=\"axis end\">%.1f GB/s</text>\n</svg>\n",
                  lx, h - 6, CW - 60, h - 6, mx);
}

/* The roofline (log-log): each profiled launch with FLOP counters at its
 * arithmetic intensity and FLOP/s, under the ceilings min(peak, AI x DRAM
 * bandwidth) of the peaks its rows name (an_roofline). */
typedef struct roof_axis {
    double lo, hi; /* log10 range */
    int px0, px1;
} roof_axis;

static double roof_px(const roof_axis *a, double v) { return a->px0 + (log10(v) - a->lo) / (a->hi - a->lo) * (a->px1 - a->px0); }

/* One ceiling: the bandwidth slope up to the ridge, then the compute peak;
 * either alone when the other is unknown (NaN). */
static void roof_ceiling(cp_buf *b, const roof_axis *x, const roof_axis *y, double peak, double bw)
{
    double x0 = pow(10, x->lo), x1 = pow(10, x->hi);
    if (!(bw > 0))
        bw = NAN;
    double ridge = peak > 0 ? (bw > 0 ? peak / bw : x0) : (bw > 0 ? pow(10, y->hi) / bw : x1);
    if (!(peak > 0))
        peak = NAN;
    if (bw > 0) {
        double xa = fmax(x0, pow(10, y->lo) / bw), xr = fmin(fmax(ridge, x0), x1);
        if (xa < xr)
            cp_buf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#555\" "
                             "stroke-width=\"1.5\"><title>DRAM %.3g GB/s</title></line>\n",
                          roof_px(x, xa), roof_px(y, xa * bw), roof_px(x, xr), roof_px(y, xr * bw), bw / 1e9);
    }
    if (!(peak > 0))
        return;
    double xr = fmin(fmax(ridge, x0), x1);
    if (xr < x1)
        cp_buf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#555\" stroke-width=\"1.5\"/>"
                         "<text x=\"%.1f\" y=\"%.1f\" class=\"axis end\">%.3g TFLOP/s</text>\n",
                      roof_px(x, xr), roof_px(y, peak), roof_px(x, x1), roof_px(y, peak), roof_px(x, x1) - 2,
                      roof_px(y, peak) - 4, peak / 1e12);
}

static void chart_roofline(cp_buf *b, const rep_node *k)
{
    if (!k)
        return; /* no Nsight Compute results given: no section */
    cp_buf_puts(b, "<h2>Profiled kernels on their roofline</h2>\n");
    double ai_lo = INFINITY, ai_hi = 0, f_lo = INFINITY, f_hi = 0;
    size_t placed = 0, n = 0;
    for (const rep_node *r = k->first; r; r = r->next, n++) {
        double ai = num_at(r, "arithmetic_intensity"), f = num_at(r, "flops_per_s"), pk = num_at(r, "peak_flops_per_s");
        double bw = num_at(r, "peak_dram_bytes_per_s");
        if (!(ai > 0) || !(f > 0))
            continue;
        placed++;
        ai_lo = fmin(ai_lo, ai), ai_hi = fmax(ai_hi, ai), f_lo = fmin(f_lo, f), f_hi = fmax(f_hi, f);
        if (pk > 0) {
            f_hi = fmax(f_hi, pk);
            if (bw > 0)
                ai_lo = fmin(ai_lo, pk / bw), ai_hi = fmax(ai_hi, pk / bw);
        }
    }
    if (!placed) {
        note(b, "chart-roofline", "no profiled kernel has both FLOP counters and DRAM bytes: none can be placed");
        return;
    }
    int h = 380, lx = 70, by = h - 30;
    roof_axis x = {floor(log10(ai_lo)) - 1, ceil(log10(ai_hi)) + 1, lx, CW - 20};
    roof_axis y = {floor(log10(f_lo)) - 1, ceil(log10(f_hi)) + 0.3, by, 10};
    svg_open(b, "chart-roofline", "profiled kernels on their roofline", CW, h);
    for (int d = (int)x.lo; d <= (int)x.hi; d++)
        cp_buf_printf(b, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#eee\"/><text x=\"%.1f\" y=\"%d\" "
                         "class=\"axis\">1e%d</text>\n", roof_px(&x, pow(10, d)), 10, roof_px(&x, pow(10, d)), by,
                      roof_px(&x, pow(10, d)) - 8, by + 14, d);
    for (int d = (int)ceil(y.lo); d <= (int)y.hi; d++)
        cp_buf_printf(b, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#eee\"/><text x=\"%d\" y=\"%.1f\" "
                         "class=\"lbl\">1e%d</text>\n", lx, roof_px(&y, pow(10, d)), CW - 20, roof_px(&y, pow(10, d)),
                      lx - 4, roof_px(&y, pow(10, d)) + 4, d);
    double seen_pk[8], seen_bw[8];
    int n_seen = 0;
    for (const rep_node *r = k->first; r; r = r->next) {
        double pk = num_at(r, "peak_flops_per_s"), bw = num_at(r, "peak_dram_bytes_per_s");
        if (!(num_at(r, "arithmetic_intensity") > 0) || !(num_at(r, "flops_per_s") > 0))
            continue; /* only the ceilings of the kernels on the chart */
        bool dup = false; /* the same ceiling within 1 % (ncu's per-launch estimates differ slightly) */
        for (int i = 0; i < n_seen; i++)
            dup |= (isnan(pk) ? isnan(seen_pk[i]) : fabs(seen_pk[i] - pk) <= 0.01 * pk) &&
                   (isnan(bw) ? isnan(seen_bw[i]) : fabs(seen_bw[i] - bw) <= 0.01 * bw);
        if ((!(pk > 0) && !(bw > 0)) || dup || n_seen == 8)
            continue;
        seen_pk[n_seen] = pk, seen_bw[n_seen++] = bw;
        roof_ceiling(b, &x, &y, pk, bw);
    }
    for (const rep_node *r = k->first; r; r = r->next) {
        double ai = num_at(r, "arithmetic_intensity"), f = num_at(r, "flops_per_s"), pct = num_at(r, "roofline_pct");
        if (!(ai > 0) || !(f > 0))
            continue;
        cp_buf_printf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"#d55e00\"><title>", roof_px(&x, ai), roof_px(&y, f));
        esc(b, str_at(r, "name"));
        cp_buf_printf(b, ": %.3g FLOP/s at %.3g FLOP/byte", f, ai);
        if (isfinite(pct))
            cp_buf_printf(b, ", %.0f %% of its roofline", pct);
        cp_buf_puts(b, "</title></circle>\n");
    }
    cp_buf_printf(b, "<text x=\"%d\" y=\"%d\" class=\"axis\">arithmetic intensity (FLOP per DRAM byte) &#8594;</text>"
                     "<text x=\"4\" y=\"12\" class=\"axis\">FLOP/s</text>\n</svg>\n", lx, h - 4);
    if (placed < n)
        cp_buf_printf(b, "<p class=\"note\">%zu of %zu profiled launches have no FLOP counters or DRAM bytes and are "
                         "not on the chart (collect them with ncu --section SpeedOfLight_RooflineChart or the "
                         "sm__sass_thread_inst_executed_op_* metrics)</p>\n", n - placed, n);
}

static void chart_heatmap(cp_buf *b, const rep_node *ranks)
{
    cp_buf_puts(b, "<h2>Step time, rank by step</h2>\n");
    size_t nr = ranks ? ranks->n_children : 0, ns = 0;
    double lo = INFINITY, hi = 0;
    for (const rep_node *r = nr ? ranks->first : NULL; r; r = r->next) {
        const rep_node *st = at(r, "steps");
        if (!st)
            continue;
        ns = CP_MAX(ns, st->n_children);
        for (const rep_node *s = st->first; s; s = s->next) {
            double d = num_at(s, "dur_ns");
            if (isfinite(d)) {
                lo = fmin(lo, d);
                hi = fmax(hi, d);
            }
        }
    }
    if (nr == 0 || ns == 0 || !(hi > 0)) {
        note(b, "chart-heatmap", "no profiler steps in this report");
        return;
    }
    int cw = (int)CP_MAX(2, CP_MIN(40, (CW - LX - 10) / (int)ns)), chh = nr > 64 ? 6 : 16;
    int h = (int)nr * chh + 40;
    /* the scale starts at most at 80 % of the longest step, so a 1 %
     * spread stays pale instead of spanning the whole palette */
    lo = fmin(lo, 0.8 * hi);
    cp_buf_printf(b, "<p>darker = longer; colour scale from ");
    fmt_ns(b, lo);
    cp_buf_puts(b, " to ");
    fmt_ns(b, hi);
    cp_buf_puts(b, "</p>\n");
    svg_open(b, "chart-heatmap", "step time per rank and step", CW, h);
    int y = 4;
    for (const rep_node *r = ranks->first; r; r = r->next, y += chh) {
        cp_buf_printf(b, "<text x=\"%d\" y=\"%d\" class=\"lbl\">rank %.0f</text>\n", LX - 6, y + chh - 3,
                      num_at(r, "rank"));
        const rep_node *st = at(r, "steps");
        int x = LX;
        for (const rep_node *s = st ? st->first : NULL; s; s = s->next, x += cw) {
            double d = num_at(s, "dur_ns");
            if (!isfinite(d))
                continue;
            double f = hi > lo ? (d - lo) / (hi - lo) : 0.5;
            int c = (int)(235 - f * 190); /* light to dark red */
            cp_buf_printf(b, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"rgb(%d,%d,%d)\"><title>rank %.0f "
                             "step %.0f ",
                          x, y, cw, chh, 250, c, c - 20 < 0 ? 0 : c - 20, num_at(r, "rank"), num_at(s, "id"));
            fmt_ns(b, d);
            cp_buf_puts(b, "</title></rect>\n");
        }
    }
    cp_buf_printf(b, "<text x=\"%d\" y=\"%d\" class=\"axis\">steps &#8594;</text>\n</svg>\n", LX, h - 8);
}

/* The communication matrix (comm_matrix.pairs): sender rows, receiver
 * columns, darker = more bytes; each cell's title has bytes and GB/s. */
static void chart_commmatrix(cp_buf *b, const rep_node *cm)
{
    cp_buf_puts(b, "<h2>Communication matrix</h2>\n");
    const rep_node *pairs = cm ? at(cm, "pairs") : NULL;
    int32_t *rk = NULL;
    size_t nr = 0, cap = 0;
    double hi = 0;
    for (const rep_node *p = pairs ? pairs->first : NULL; p; p = p->next) {
        double e[2] = { num_at(p, "src"), num_at(p, "dst") };
        for (int k = 0; k < 2; k++) {
            size_t i = 0;
            while (i < nr && rk[i] != (int32_t)e[k])
                i++;
            if (i == nr) {
                cp_xgrow((void **)&rk, &cap, nr + 1, sizeof *rk);
                rk[nr++] = (int32_t)e[k];
            }
        }
        hi = fmax(hi, num_at(p, "bytes"));
    }
    if (!nr || !(hi > 0)) {
        note(b, "chart-comm-matrix", "no collective traffic in this report");
        free(rk);
        return;
    }
    for (size_t i = 1; i < nr; i++) /* ranks ascending */
        for (size_t k = i; k > 0 && rk[k] < rk[k - 1]; k--) {
            int32_t t = rk[k];
            rk[k] = rk[k - 1];
            rk[k - 1] = t;
        }
    int cell = (int)CP_MAX(2, CP_MIN(24, (CW - LX - 10) / (int)nr)), h = (int)nr * cell + 40;
    cp_buf_puts(b, "<p>rows send, columns receive; darker = more bytes</p>\n");
    svg_open(b, "chart-comm-matrix", "bytes sent between rank pairs", CW, h);
    for (size_t i = 0; i < nr && cell >= 10; i++)
        cp_buf_printf(b, "<text x=\"%d\" y=\"%d\" class=\"lbl\">rank %d</text>\n", LX - 6, 4 + (int)i * cell + cell - 3,
                      rk[i]);
    for (const rep_node *p = pairs->first; p; p = p->next) {
        size_t si = 0, di = 0;
        while (rk[si] != (int32_t)num_at(p, "src"))
            si++;
        while (rk[di] != (int32_t)num_at(p, "dst"))
            di++;
        double f = num_at(p, "bytes") / hi;
        int c = (int)(235 - f * 190);
        cp_buf_printf(b, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"rgb(%d,%d,250)\"><title>rank %d to %d: "
                         "%.0f bytes, %.2f GB/s (%s)</title></rect>\n",
                      LX + (int)di * cell, 4 + (int)si * cell, cell, cell, c, c, rk[si], rk[di], num_at(p, "bytes"),
                      num_at(p, "gbps"), str_at(p, "scope") ? str_at(p, "scope") : "?");
    }
    cp_buf_printf(b, "<text x=\"%d\" y=\"%d\" class=\"axis\">to rank &#8594;</text>\n</svg>\n", LX, h - 8);
    free(rk);
}

/* ---- text parts ---- */

static void findings(cp_buf *b, const rep_node *f)
{
    cp_buf_puts(b, "<h2>Findings, by estimated gain</h2>\n<ol id=\"findings\">\n");
    if (!f || !f->n_children)
        cp_buf_puts(b, "<li>no problem found by the rules</li>\n");
    for (const rep_node *x = f ? f->first : NULL; x; x = x->next) {
        const char *sev = str_at(x, "severity");
        cp_buf_printf(b, "<li class=\"finding\"><span class=\"sev sev-%s\">", sev ? sev : "info");
        esc(b, sev);
        cp_buf_puts(b, "</span> <b>");
        esc(b, str_at(x, "title"));
        cp_buf_puts(b, "</b> <code>");
        esc(b, str_at(x, "code"));
        cp_buf_puts(b, "</code> layer <b>");
        esc(b, str_at(x, "layer"));
        double g = num_at(x, "estimated_gain_pct");
        if (isfinite(g))
            cp_buf_printf(b, "</b>; estimated gain <b>%.1f %%</b>", g);
        else
            cp_buf_puts(b, "</b>");
        cp_buf_puts(b, "<br><small>assuming ");
        esc(b, str_at(x, "gain_assumption"));
        cp_buf_puts(b, "</small>\n<ul class=\"evidence\">");
        const rep_node *ev = at(x, "evidence");
        for (const rep_node *e = ev ? ev->first : NULL; e; e = e->next)
            if (e->type == REP_STR) {
                cp_buf_puts(b, "<li>");
                esc(b, e->v.s);
                cp_buf_puts(b, "</li>");
            }
        cp_buf_puts(b, "</ul>\n<p class=\"rec\">");
        esc(b, str_at(x, "recommendation"));
        cp_buf_puts(b, "</p></li>\n");
    }
    cp_buf_puts(b, "</ol>\n");
}

static void table(cp_buf *b, const rep_node *t)
{
    cp_buf_puts(b, "<h2>");
    esc(b, t->title ? t->title : t->key);
    cp_buf_puts(b, "</h2>\n");
    if (!t->first) {
        cp_buf_puts(b, "<p class=\"note\">(none)</p>\n");
        return;
    }
    cp_buf_printf(b, "<table id=\"table-%s\"><thead><tr>", t->key ? t->key : "");
    for (size_t c = 0; c < t->n_cols; c++) {
        cp_buf_puts(b, "<th>");
        esc(b, t->cols[c].title);
        cp_buf_puts(b, "</th>");
    }
    cp_buf_puts(b, "</tr></thead><tbody>\n");
    cp_buf cell = CP_BUF_INIT;
    for (const rep_node *row = t->first; row; row = row->next) {
        cp_buf_puts(b, "<tr>");
        for (const rep_node *x = row->first; x; x = x->next) {
            cp_buf_reset(&cell);
            render_value(&cell, x);
            cp_buf_printf(b, "<td%s>", x->type == REP_INT || x->type == REP_NUM ? " class=\"n\"" : "");
            esc(b, cp_buf_str(&cell));
            cp_buf_puts(b, "</td>");
        }
        cp_buf_puts(b, "</tr>\n");
    }
    cp_buf_free(&cell);
    cp_buf_puts(b, "</tbody></table>\n");
}

static const char style[] =
    "body{font:14px/1.4 system-ui,sans-serif;margin:2em auto;max-width:960px;color:#222}"
    "h1{font-size:1.5em}h2{font-size:1.15em;margin-top:1.6em;border-bottom:1px solid #ddd}"
    ".verdict{background:#f6f6f6;padding:.6em 1em;border-left:4px solid #d55e00}"
    ".legend span{margin-right:1em}.legend i{display:inline-block;width:.9em;height:.9em;margin-right:.3em;"
    "vertical-align:middle}"
    ".chart{display:block;max-width:100%;height:auto}.chart .lbl{font-size:11px;text-anchor:end}"
    ".chart .axis,.chart .val{font-size:11px}.chart .end{text-anchor:end}"
    ".sev{padding:0 .4em;border-radius:3px;color:#fff;background:#777}.sev-high,.sev-critical{background:#c0392b}"
    ".sev-medium{background:#e67e22}.sev-low{background:#2980b9}"
    ".finding{margin-bottom:1em}.rec{margin:.3em 0;font-style:italic}"
    "table{border-collapse:collapse;font-size:12px}td,th{padding:2px 8px;border-bottom:1px solid #eee}"
    "td.n{text-align:right}.note{color:#777}";

/* Reports other than analyze's (probe, diagnose, model, plan) have no
 * charts here: their tables and values are written in report order, headed
 * by their titles, so every command's -o FILE.html is readable. */
static void generic(cp_buf *b, const rep_node *n, int depth)
{
    if (n->flags & REP_F_NO_TEXT)
        return;
    if (n->type == REP_ARR && (n->flags & REP_F_TABLE)) {
        table(b, n);
        return;
    }
    if (n->type == REP_OBJ || n->type == REP_ARR) {
        if (depth > 0 && (n->title || n->key)) {
            cp_buf_puts(b, depth == 1 ? "<h2>" : "<h3>");
            esc(b, n->title ? n->title : n->key);
            cp_buf_puts(b, depth == 1 ? "</h2>\n" : "</h3>\n");
        }
        for (const rep_node *c = n->first; c; c = c->next)
            generic(b, c, depth + 1);
        return;
    }
    if (n->type == REP_JSON || (depth == 1 && n->key && (!strcmp(n->key, "schema"))))
        return;
    cp_buf_puts(b, "<p>");
    if (n->title || n->key) {
        cp_buf_puts(b, "<b>");
        esc(b, n->title ? n->title : n->key);
        cp_buf_puts(b, "</b>: ");
    }
    cp_buf v = CP_BUF_INIT;
    render_value(&v, n);
    esc(b, cp_buf_str(&v));
    cp_buf_free(&v);
    cp_buf_puts(b, "</p>\n");
}

int render_html(const rep_report *r, cp_buf *out, const render_opts *o, cp_error *err)
{
    const rep_node *root = r->root;
    cp_buf_puts(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                     "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                     "<link rel=\"icon\" href=\"data:,\">\n<title>chainprof report</title>\n<style>");
    cp_buf_puts(out, style);
    cp_buf_puts(out, "</style>\n</head>\n<body>\n<h1>chainprof report</h1>\n<p class=\"meta\">");
    esc(out, str_at(root, "schema"));
    cp_buf_puts(out, ", chainprof ");
    esc(out, str_at(root, "tool.version"));
    cp_buf_puts(out, "</p>\n");
    const char *schema = str_at(root, "schema");
    bool analyze = schema && !strncmp(schema, "chainprof.analyze/", 18);
    const rep_node *v = analyze ? at(root, "verdict") : NULL;
    if (!analyze)
        for (const rep_node *c = root->first; c; c = c->next)
            if (!c->key || (strcmp(c->key, "tool") != 0 && strcmp(c->key, "command") != 0))
                generic(out, c, 1);
    if (v) {
        cp_buf_puts(out, "<div class=\"verdict\" id=\"verdict\"><b>Bottleneck layer: ");
        esc(out, str_at(v, "bottleneck_layer") ? str_at(v, "bottleneck_layer") : "none found");
        cp_buf_puts(out, "</b><br>");
        esc(out, str_at(v, "top_finding"));
        double st = num_at(v, "step_time_ns");
        if (isfinite(st)) {
            cp_buf_puts(out, "<br>measured time in profiler steps (mean over ranks): ");
            fmt_ns(out, st);
        }
        cp_buf_puts(out, "</div>\n");
    }
    if (analyze) {
        findings(out, at(root, "findings"));
        const rep_node *ranks = at(root, "ranks");
        chart_layers(out, ranks);
        chart_slowest(out, at(root, "slowest_step"));
        chart_collectives(out, at(root, "collectives"));
        chart_heatmap(out, ranks);
        chart_commmatrix(out, at(root, "comm_matrix"));
        chart_roofline(out, at(root, "kernels_roofline"));
        for (const rep_node *c = root->first; c; c = c->next)
            if (c->type == REP_ARR && (c->flags & REP_F_TABLE) && !(c->flags & REP_F_NO_TEXT))
                table(out, c);
    }

    /* the JSON report, embedded; "</" cannot appear inside the element */
    cp_buf js = CP_BUF_INIT;
    int rc = render_json(r, &js, o, err);
    if (rc < 0) {
        cp_buf_free(&js);
        return rc;
    }
    cp_buf_puts(out, "<script type=\"application/json\" id=\"chainprof-report\">\n");
    const char *s = cp_buf_str(&js);
    for (size_t i = 0; i < js.len; i++) {
        if (s[i] == '<' && s[i + 1] == '/')
            cp_buf_puts(out, "<\\");
        else
            cp_buf_putc(out, s[i]);
    }
    cp_buf_puts(out, "</script>\n</body>\n</html>\n");
    cp_buf_free(&js);
    return 0;
}
