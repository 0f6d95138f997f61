/* ev_topo.c - `nvidia-smi topo -m` reader. See ev_topo.h.
 *
 * Cells are split on single tabs when the line has tabs (so the empty
 * affinity cells of NIC rows stay in place) and on runs of blanks otherwise.
 * The header fixes the device order; each row is matched to its header
 * column by label, so a pasted matrix with a missing row still reads.
 */
#include "rd_topo.h"

#include "../base/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CELLS (EV_TOPO_MAX_DEVICES + 8)

enum aff_col { A_CPU, A_NUMA, A_GPU_NUMA, A_OTHER };

typedef struct cellv {
    const char *p;
    size_t n;
} cellv;

/* Split into cells; *ncells gets the count (at most max). */
static int split_cells(const char *line, size_t len, cellv *c, int max, int *tabbed)
{
    int n = 0;
    *tabbed = memchr(line, '\t', len) != NULL;
    if (*tabbed) {
        size_t s = 0;
        for (size_t i = 0; i <= len && n < max; i++) {
            if (i == len || line[i] == '\t') {
                c[n].p = line + s;
                c[n].n = i - s;
                rd_trim(&c[n].p, &c[n].n);
                n++;
                s = i + 1;
            }
        }
        return n;
    }
    rd_field f[MAX_CELLS];
    int k = rd_split(line, len, f, max < MAX_CELLS ? max : MAX_CELLS, NULL);
    for (int i = 0; i < k; i++) {
        c[i].p = f[i].p;
        c[i].n = f[i].len;
    }
    return k;
}

static int ceq(const cellv *c, const char *s)
{
    size_t n = strlen(s);
    return c->n == n && memcmp(c->p, s, n) == 0;
}

/* "NV12" -> 12; 0 when not an NV cell. */
static int nv_lanes(const cellv *c)
{
    if (c->n < 3 || c->p[0] != 'N' || c->p[1] != 'V')
        return 0;
    int v = 0;
    for (size_t i = 2; i < c->n; i++) {
        if (c->p[i] < '0' || c->p[i] > '9' || v > 100000)
            return 0;
        v = v * 10 + (c->p[i] - '0');
    }
    return v;
}

/* Path class of a cell; 1 when recognised (self -> kind unknown, lanes 0). */
static int path_cell(const cellv *c, ev_topo_cell *out)
{
    static const struct { const char *s; topo_link_kind k; } tab[] = {
        {"PIX", TOPO_LINK_PIX}, {"PXB", TOPO_LINK_PXB}, {"PHB", TOPO_LINK_PHB},
        {"NODE", TOPO_LINK_NODE}, {"SYS", TOPO_LINK_SYS}, {"SOC", TOPO_LINK_SYS},
    };
    out->kind = TOPO_LINK_UNKNOWN;
    out->lanes = 0;
    if (ceq(c, "X"))
        return 1;
    int lanes = nv_lanes(c);
    if (lanes > 0) {
        out->kind = TOPO_LINK_NVLINK;
        out->lanes = lanes;
        return 1;
    }
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
        if (ceq(c, tab[i].s)) {
            out->kind = tab[i].k;
            return 1;
        }
    return 0;
}

/* A `topo -p2p` status cell; 1 when recognised. */
static int p2p_cell(const cellv *c, int *out)
{
    static const struct { const char *s; int v; } tab[] = {
        {"OK", EV_TOPO_P2P_OK}, {"CNS", EV_TOPO_P2P_CNS}, {"GNS", EV_TOPO_P2P_GNS}, {"TNS", EV_TOPO_P2P_TNS},
        {"NS", EV_TOPO_P2P_NS}, {"DR", EV_TOPO_P2P_DR}, {"U", EV_TOPO_P2P_U},
    };
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
        if (ceq(c, tab[i].s)) {
            *out = tab[i].v;
            return 1;
        }
    return 0;
}

/* A device label: letters then digits possibly with '_' ("GPU0", "NIC10",
 * "mlx5_0"), ending in a digit, not a path value like NV12. */
static int is_label(const cellv *c)
{
    if (c->n == 0 || c->n >= 24 || !((c->p[0] >= 'A' && c->p[0] <= 'Z') || (c->p[0] >= 'a' && c->p[0] <= 'z')))
        return 0;
    if (c->p[c->n - 1] < '0' || c->p[c->n - 1] > '9' || nv_lanes(c) > 0)
        return 0;
    for (size_t i = 0; i < c->n; i++) {
        char ch = c->p[i];
        if (!((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_'))
            return 0;
    }
    return 1;
}

static int label_index(const char *label, size_t prefix)
{
    return rd_leading_int(label + prefix, strlen(label + prefix), -1);
}

typedef struct parser {
    ev_topo *m;
    char *name;     /* the input, for damage notes */
    diag_set local; /* damage counted while reading */
    cellv *c;       /* cells of the line being read */
    enum aff_col aff[8];
    int n_aff;
    int in_legend;
    /* columns of a second matrix (topo -p2p lists the GPUs only): device
     * index per column; n_cols 0 = the header's devices in order */
    int n_cols;
    int *col_dev;
} parser;

static int parse_header(parser *ps, const cellv *c, int n, uint32_t lineno, int tabbed)
{
    ev_topo *m = ps->m;
    int i = 0;
    while (i < n && c[i].n == 0)
        i++;
    int start = i;
    while (i < n && is_label(&c[i]))
        i++;
    size_t ndev = (size_t)(i - start);
    if (ndev == 0)
        return -1;
    /* Affinity columns: one cell each when tab separated, else words. */
    ps->n_aff = 0;
    for (; i < n && ps->n_aff < 8; i++) {
        if (c[i].n == 0)
            continue;
        enum aff_col a = A_OTHER;
        if (ceq(&c[i], "CPU Affinity") || (ceq(&c[i], "CPU") && i + 1 < n && ceq(&c[i + 1], "Affinity")))
            a = A_CPU;
        else if (ceq(&c[i], "NUMA Affinity") || (ceq(&c[i], "NUMA") && i + 1 < n && ceq(&c[i + 1], "Affinity")))
            a = A_NUMA;
        else if (ceq(&c[i], "GPU NUMA ID") ||
                 (ceq(&c[i], "GPU") && i + 2 < n && ceq(&c[i + 1], "NUMA") && ceq(&c[i + 2], "ID")))
            a = A_GPU_NUMA;
        if (!tabbed && a != A_OTHER)
            i += a == A_GPU_NUMA ? 2 : 1;
        ps->aff[ps->n_aff++] = a;
    }
    if (ndev > EV_TOPO_MAX_DEVICES) {
        rd_note(&ps->local, DIAG_LIMIT_REACHED, ps->name, lineno);
        ndev = EV_TOPO_MAX_DEVICES;
    }
    m->devs = cp_xcalloc(ndev, sizeof *m->devs);
    m->cells = cp_xcalloc(ndev * ndev, sizeof *m->cells);
    m->n_devs = ndev;
    int nic_pos = 0;
    for (size_t d = 0; d < ndev; d++) {
        ev_topo_dev *dv = &m->devs[d];
        const cellv *lc = &c[start + (int)d];
        rd_copy(dv->label, sizeof dv->label, lc->p, lc->n);
        rd_copy(dv->name, sizeof dv->name, lc->p, lc->n);
        dv->numa_affinity = dv->gpu_numa_id = -1;
        dv->is_gpu = rd_starts(lc->p, lc->n, "GPU");
        if (dv->is_gpu) {
            dv->index = label_index(dv->label, 3);
            m->n_gpus++;
        } else {
            dv->index = rd_starts(lc->p, lc->n, "NIC") ? label_index(dv->label, 3) : nic_pos;
            nic_pos++;
            m->n_nics++;
        }
    }
    m->header_line = lineno;
    m->tab_separated = tabbed;
    return 0;
}

static int find_dev(const ev_topo *m, const cellv *c)
{
    for (size_t i = 0; i < m->n_devs; i++)
        if (ceq(c, m->devs[i].label))
            return (int)i;
    return -1;
}

static void parse_affinity(parser *ps, ev_topo_dev *dv, const cellv *c, int n, uint32_t lineno)
{
    for (int k = 0; k < ps->n_aff && k < n; k++) {
        const cellv *v = &c[k];
        if (v->n == 0 || ceq(v, "N/A"))
            continue;
        int64_t x;
        switch (ps->aff[k]) {
        case A_CPU:
            rd_copy(dv->cpu_affinity, sizeof dv->cpu_affinity, v->p, v->n);
            break;
        case A_NUMA:
        case A_GPU_NUMA:
            if (rd_i64(v->p, v->n, &x) == 0 && x >= 0 && x < 1 << 20) {
                if (ps->aff[k] == A_NUMA)
                    dv->numa_affinity = (int)x;
                else
                    dv->gpu_numa_id = (int)x;
            } else {
                rd_note(&ps->local, DIAG_EVIDENCE_BAD_VALUE, ps->name, lineno);
            }
            break;
        default:
            break;
        }
    }
}

static void parse_row(parser *ps, int row, const cellv *c, int n, uint32_t lineno)
{
    ev_topo *m = ps->m;
    int nd = ps->n_cols ? ps->n_cols : (int)m->n_devs;
    if (n < 1 + nd) {
        rd_note(&ps->local, DIAG_EVIDENCE_BAD_ROW, ps->name, lineno);
        return;
    }
    ev_topo_dev *dv = &m->devs[row];
    if (!ps->n_cols)
        dv->line = lineno;
    for (int j = 0; j < nd; j++) {
        size_t col = ps->n_cols ? (size_t)ps->col_dev[j] : (size_t)j;
        ev_topo_cell cell, *dst = &m->cells[(size_t)row * m->n_devs + col];
        int p2p;
        if (path_cell(&c[1 + j], &cell)) {
            if (cell.kind != TOPO_LINK_UNKNOWN || dst->kind == TOPO_LINK_UNKNOWN) {
                dst->kind = cell.kind;
                dst->lanes = cell.lanes;
            }
        } else if (p2p_cell(&c[1 + j], &p2p)) { /* nvidia-smi topo -p2p */
            dst->p2p = p2p;
            if (!m->p2p_line)
                m->p2p_line = lineno;
        } else {
            rd_note(&ps->local, DIAG_EVIDENCE_BAD_VALUE, ps->name, lineno);
        }
    }
    if (!ps->n_cols)
        parse_affinity(ps, dv, c + 1 + nd, n - 1 - nd, lineno);
}

/* "  NIC0: mlx5_0" */
static void parse_legend(parser *ps, const char *line, size_t len, uint32_t lineno)
{
    const char *colon = memchr(line, ':', len);
    if (!colon)
        return;
    cellv lab = {line, (size_t)(colon - line)};
    rd_trim(&lab.p, &lab.n);
    cellv val = {colon + 1, len - (size_t)(colon + 1 - line)};
    rd_trim(&val.p, &val.n);
    int d = find_dev(ps->m, &lab);
    if (d < 0 || val.n == 0)
        return;
    rd_copy(ps->m->devs[d].name, sizeof ps->m->devs[d].name, val.p, val.n);
    ps->m->devs[d].legend_line = lineno;
    ps->m->has_nic_legend = 1;
}

void *rd_topo_begin(const char *name)
{
    parser *ps = cp_xcalloc(1, sizeof *ps);
    ps->m = cp_xcalloc(1, sizeof *ps->m);
    ps->name = cp_xstrdup(name ? name : "");
    diag_init(&ps->local);
    ps->c = cp_xmalloc((MAX_CELLS + 1) * sizeof *ps->c);
    return ps;
}

void rd_topo_line(void *st, const rd_line *ln)
{
    parser *ps = st;
    ev_topo *m = ps->m;
    cellv *c = ps->c;
    const char *line = ln->text;
    size_t n = ln->len;
    uint32_t lineno = (uint32_t)ln->no;
    int tabbed;
    int k = split_cells(line, n, c, MAX_CELLS, &tabbed);
    int first = 0;
    while (first < k && c[first].n == 0)
        first++;
    if (first >= k)
        return;
    if (m->n_devs == 0) {
        /* Header: a label followed by a label or the affinity words. */
        if (is_label(&c[first]) && first + 1 < k &&
            (is_label(&c[first + 1]) || rd_starts(c[first + 1].p, c[first + 1].n, "CPU")))
            parse_header(ps, c, k, lineno, tabbed);
        return;
    }
    if (rd_starts(c[first].p, (size_t)(line + n - c[first].p), "NIC Legend")) {
        ps->in_legend = 1;
        return;
    }
    int row = find_dev(m, &c[first]);
    if (ps->in_legend && row < 0) {
        parse_legend(ps, line, n, lineno);
        return;
    }
    ps->in_legend = 0; /* a device row after the legend: the next matrix */
    if (row >= 0 && first + 1 < k && find_dev(m, &c[first + 1]) >= 0) {
        /* the header again: a second matrix of these devices (topo -p2p, GPUs only) */
        if (!ps->col_dev)
            ps->col_dev = cp_xcalloc(m->n_devs, sizeof *ps->col_dev);
        ps->n_cols = 0;
        for (int i = first; i < k && ps->n_cols < (int)m->n_devs; i++) {
            int d = find_dev(m, &c[i]);
            if (d < 0)
                break;
            ps->col_dev[ps->n_cols++] = d;
        }
        return;
    }
    if (row >= 0)
        parse_row(ps, row, c + first, k - first, lineno);
}

void *rd_topo_end(void *st, diag_set *diag)
{
    parser *ps = st;
    ev_topo *m = ps->m;
    free(ps->c);
    free(ps->col_dev);
    free(ps->name);
    if (m->n_devs == 0) { /* no header row of device columns */
        ev_topo_free(m);
        m = NULL;
    } else {
        diag_merge(diag, &ps->local);
    }
    free(ps);
    return m;
}




/* The cell for a pair, from either row (a pasted matrix may lack one). */


int rd_topo_fill(const ev_topo *m, const char *source, topo *t, const char *host, cp_error *err)
{
    int32_t file = topo_add_source(t, source);
    topo_src hsrc = {file, m->header_line};
    int h = topo_add_host(t, host ? host : "localhost", hsrc);
    if (h < 0)
        goto cap;
    int *ref = cp_xmalloc(m->n_devs * sizeof *ref + 1); /* device -> model index */
    for (size_t i = 0; i < m->n_devs; i++) {
        const ev_topo_dev *dv = &m->devs[i];
        topo_src src = {file, dv->line ? dv->line : m->header_line};
        int numa = -1;
        if (dv->numa_affinity >= 0) {
            numa = topo_add_numa(t, (uint32_t)h, dv->numa_affinity, src);
            if (numa < 0)
                goto cap_free;
            topo_numa *nn = &t->numa_nodes[numa];
            if (!nn->cpus[0])
                rd_copy(nn->cpus, sizeof nn->cpus, dv->cpu_affinity, strlen(dv->cpu_affinity));
        }
        if (dv->is_gpu) {
            ref[i] = topo_add_gpu(t, (uint32_t)h, dv->index, src);
            if (ref[i] < 0)
                goto cap_free;
            topo_gpu *g = &t->gpus[ref[i]];
            g->numa = numa;
            rd_copy(g->cpu_affinity, sizeof g->cpu_affinity, dv->cpu_affinity, strlen(dv->cpu_affinity));
        } else {
            ref[i] = topo_add_nic(t, (uint32_t)h, dv->name, src);
            if (ref[i] < 0)
                goto cap_free;
            topo_nic *c = &t->nics[ref[i]];
            if (strcmp(dv->label, dv->name) != 0)
                rd_copy(c->label, sizeof c->label, dv->label, strlen(dv->label));
            c->numa = numa;
        }
    }
    /* NIC NUMA node from a GPU on the same side of the inter-socket link. */
    for (size_t i = 0; i < m->n_devs; i++) {
        if (m->devs[i].is_gpu || t->nics[ref[i]].numa >= 0)
            continue;
        for (size_t j = 0; j < m->n_devs; j++) {
            ev_topo_cell c = ev_topo_pair(m, i, j);
            if (!m->devs[j].is_gpu || t->gpus[ref[j]].numa < 0)
                continue;
            if (c.kind >= TOPO_LINK_PIX && c.kind <= TOPO_LINK_NODE) {
                t->nics[ref[i]].numa = t->gpus[ref[j]].numa;
                break;
            }
        }
    }
    for (size_t i = 0; i < m->n_devs; i++) {
        for (size_t j = i + 1; j < m->n_devs; j++) {
            ev_topo_cell c = ev_topo_pair(m, i, j);
            if (c.kind == TOPO_LINK_UNKNOWN)
                continue;
            topo_ref a = {m->devs[i].is_gpu ? TOPO_EP_GPU : TOPO_EP_NIC, (uint32_t)ref[i]};
            topo_ref b = {m->devs[j].is_gpu ? TOPO_EP_GPU : TOPO_EP_NIC, (uint32_t)ref[j]};
            topo_src src = {file, m->devs[i].line ? m->devs[i].line : m->devs[j].line};
            if (topo_add_link(t, c.kind, a, b, c.lanes, NAN, NAN, src) < 0)
                goto cap_free;
        }
    }
    free(ref);
    return 0;
cap_free:
    free(ref);
cap:
    return cp_error_set(err, CP_ERR_NOMEM, source, 0, 0, -1,
                        "topology model full: more than %d items", TOPO_MAX_ITEMS);
}

int rd_topo_sniff(const char *buf, size_t len)
{
    if (len > RD_SNIFF_BYTES)
        len = RD_SNIFF_BYTES;
    int score = 0;
    if (rd_find(buf, len, "GPU0") && rd_find(buf, len, "CPU Affinity"))
        score += 50;
    if (rd_find(buf, len, "GPU0") && (rd_find(buf, len, "Chipset not supported") || rd_find(buf, len, "GNS") ||
                                      rd_find(buf, len, "CNS") || rd_find(buf, len, "TNS")))
        score += 50; /* nvidia-smi topo -p2p */
    if (rd_find(buf, len, "Connection traversing"))
        score += 30;
    if (rd_find(buf, len, " X ") || rd_find(buf, len, "\tX\t"))
        score += 10;
    if (rd_find(buf, len, "NODE") || rd_find(buf, len, "SYS") || rd_find(buf, len, "PIX"))
        score += 10;
    if (rd_find(buf, len, "NIC Legend"))
        score += 10;
    return score > 100 ? 100 : score;
}
