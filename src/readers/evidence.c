/* evidence.c - the evidence reader table and content detection.
 * See evidence.h for the contract and how to add a row. */
#include "evidence.h"

#include <stdlib.h>
#include <string.h>

#include "../base/src.h"
#include "../base/util.h"

#include "rd_dmon.h"
#include "rd_fio.h"
#include "rd_iperf.h"
#include "rd_nccltests.h"
#include "rd_perftest.h"
#include "rd_text.h"
#include "rd_topo.h"

/* Adapters from each reader's typed API to the table's void * one. */
#define RD_EVIDENCE_ADAPT(fmt, type)                                                  \
    static int parse_##fmt(const char *data, size_t len, const char *name, void **out, \
                           cp_error *err)                                             \
    {                                                                                 \
        type *r = NULL;                                                               \
        int rc = rd_##fmt##_parse(data, len, name, &r, err);                          \
        *out = r;                                                                     \
        return rc;                                                                    \
    }                                                                                 \
    static void free_##fmt(void *facts) { rd_##fmt##_free(facts); }                     \
    static void report_##fmt(const void *facts, rep_report *r, rep_node *obj)          \
    {                                                                                 \
        rd_##fmt##_report(facts, r, obj);                                             \
    }                                                                                 \
    static const diag_set *diag_##fmt(const void *facts)                              \
    {                                                                                 \
        return &((const type *)facts)->diag;                                          \
    }

RD_EVIDENCE_ADAPT(nccltests, rd_nccltests)
RD_EVIDENCE_ADAPT(perftest, rd_perftest)
RD_EVIDENCE_ADAPT(topo, rd_topo)
RD_EVIDENCE_ADAPT(dmon, rd_dmon)
RD_EVIDENCE_ADAPT(fio, rd_fio)
RD_EVIDENCE_ADAPT(iperf, rd_iperf)

static const rd_evidence_kind kinds[] = {
    {"nccl_tests", "nccl-tests output",
     rd_nccltests_sniff, parse_nccltests, free_nccltests, report_nccltests, diag_nccltests},
    {"perftest", "perftest output (ib_*_bw, ib_*_lat)",
     rd_perftest_sniff, parse_perftest, free_perftest, report_perftest, diag_perftest},
    {"nvidia_smi_topo", "nvidia-smi topo -m matrix",
     rd_topo_sniff, parse_topo, free_topo, report_topo, diag_topo},
    {"dmon", "nvidia-smi dmon / dcgmi dmon samples",
     rd_dmon_sniff, parse_dmon, free_dmon, report_dmon, diag_dmon},
    {"fio", "fio output",
     rd_fio_sniff, parse_fio, free_fio, report_fio, diag_fio},
    {"iperf3", "iperf3 output",
     rd_iperf_sniff, parse_iperf, free_iperf, report_iperf, diag_iperf},
};

const rd_evidence_kind *rd_evidence_kinds(size_t *n)
{
    *n = sizeof kinds / sizeof kinds[0];
    return kinds;
}

const rd_evidence_kind *rd_evidence_kind_by_key(const char *key)
{
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strcmp(kinds[i].key, key) == 0)
            return &kinds[i];
    return NULL;
}

const rd_evidence_kind *rd_evidence_detect(const char *buf, size_t len, int *confidence)
{
    const rd_evidence_kind *best = NULL;
    int best_score = 0;
    if (len > RD_SNIFF_BYTES)
        len = RD_SNIFF_BYTES;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        int s = kinds[i].sniff(buf, len);
        if (s > best_score) {
            best_score = s;
            best = &kinds[i];
        }
    }
    if (confidence)
        *confidence = best_score;
    return best_score >= RD_EVIDENCE_MIN_CONFIDENCE ? best : NULL;
}

size_t rd_evidence_detect_all(const char *buf, size_t len, const rd_evidence_kind **out,
                              size_t max)
{
    enum { NK = sizeof kinds / sizeof kinds[0] };
    int score[NK];
    size_t order[NK], n = 0;
    if (len > RD_SNIFF_BYTES)
        len = RD_SNIFF_BYTES;
    for (size_t i = 0; i < NK; i++) {
        score[i] = kinds[i].sniff(buf, len);
        if (score[i] < RD_EVIDENCE_MIN_CONFIDENCE)
            continue;
        /* insertion by descending score, stable for ties */
        size_t j = n++;
        while (j > 0 && score[order[j - 1]] < score[i]) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = i;
    }
    for (size_t i = 0; i < n && i < max; i++)
        out[i] = &kinds[order[i]];
    return n;
}

const char *rd_evidence_detect_path(const char *path, int *confidence, cp_error *err)
{
    if (confidence)
        *confidence = 0;
    char *head = cp_xmalloc(RD_SNIFF_BYTES);
    ssize_t n = cp_src_peek(path, head, RD_SNIFF_BYTES, err);
    const rd_evidence_kind *k = n < 0 ? NULL : rd_evidence_detect(head, (size_t)n, confidence);
    free(head);
    if (n < 0)
        return "not recognised"; /* err says why the file could not be read */
    if (!k) {
        cp_error_set(err, CP_ERR_FORMAT, path, 0, 0, -1,
                     "input not recognised: not an evidence format chainprof reads");
        return "not recognised";
    }
    return k->key;
}

int rd_evidence_load(const char *path, const rd_evidence_kind **kind, void **facts,
                     cp_error *err)
{
    *kind = NULL;
    *facts = NULL;
    char *data;
    size_t len;
    int rc = rd_load_file(path, &data, &len, err);
    if (rc < 0)
        return rc;
    const rd_evidence_kind *k = rd_evidence_detect(data, len, NULL);
    if (!k) {
        free(data);
        return cp_error_set(err, CP_ERR_FORMAT, path, 0, 0, -1,
                            "input not recognised: not an evidence format chainprof reads");
    }
    rc = k->parse(data, len, path, facts, err);
    free(data);
    if (rc < 0)
        return rc;
    *kind = k;
    return 0;
}
