/* test_rd_dmon.c - nvidia-smi dmon / dcgmi dmon reader on the real samples
 * and fixtures. Expected values are read off the files by hand. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "readers/rd_dmon.h"
#include "evidence_testutil.h"

EV_DEFINE_PARSE(DMON, dmon, ev_dmon)

static size_t col(const ev_dmon *d, const char *name)
{
    int c = ev_dmon_col_find(d, name);
    if (c < 0)
        fail_msg("column %s missing", name);
    return (size_t)c;
}

/* Triton on a T4: two dcgmi blocks (1 instance, then 4), entity "GPU 2". */
static void test_dcgmi_triton(void **state)
{
    (void)state;
    ev_dmon *d = parse("dmon/dcgmi-dmon-triton-gke-t4-1vs4-instances.txt", 1);
    if (!d)
        skip();
    assert_int_equal(d->flavor, EV_DMON_DCGMI);
    assert_int_equal(d->n_cols, 8); /* both headers name the same 8 fields */
    assert_int_equal(d->n_entities, 1);
    assert_string_equal(d->entities[0].name, "GPU 2");
    assert_int_equal(d->entities[0].gpu, 2);
    assert_int_equal(d->n_samples, 6);
    size_t smact = col(d, "SMACT"), gputl = col(d, "GPUTL"), tenso = col(d, "TENSO");
    const ev_dmon_stat *s = ev_dmon_stat_of(d, 0, smact);
    assert_int_equal(s->n, 6);
    CP_ASSERT_NEAR(s->min, 0.553, 1e-12);
    CP_ASSERT_NEAR(s->max, 0.934, 1e-12);
    CP_ASSERT_NEAR(s->mean, (0.652 + 0.553 + 0.562 + 0.742 + 0.934 + 0.830) / 6, 1e-12);
    CP_ASSERT_NEAR(ev_dmon_stat_of(d, EV_DMON_ALL, gputl)->min, 73, 1e-12);
    CP_ASSERT_NEAR(ev_dmon_stat_of(d, EV_DMON_ALL, gputl)->max, 97, 1e-12);
    /* the second block (4 instances) starts at line 10 */
    assert_int_equal(d->samples[3].line, 10);
    assert_int_equal(d->samples[3].seq, 3);
    CP_ASSERT_NEAR(ev_dmon_value(d, 3, tenso), 0.323, 1e-12);
    CP_ASSERT_NEAR(ev_dmon_value(d, 5, col(d, "PCIRX")), 5184262455.0, 1e-3);
    assert_int_equal(diag_total(&ev_last_diag), 0);
    ev_dmon_free(d);
}

/* DeepSpeech box: old nvidia-smi dmon -s pucvmet, four GPUs, "-" for ECC. */
static void test_nvsmi_old_format(void **state)
{
    (void)state;
    ev_dmon *d = parse("dmon/nvidia-smi-dmon-pucvmet-old-format-deepspeech178.txt", 1);
    if (!d)
        skip();
    assert_int_equal(d->flavor, EV_DMON_NVIDIA_SMI);
    assert_int_equal(d->n_cols, 17);
    assert_int_equal(d->n_entities, 4);
    assert_int_equal(d->n_samples, 4);
    size_t sm = col(d, "sm"), temp = col(d, "temp"), fb = col(d, "fb"), sbecc = col(d, "sbecc");
    assert_string_equal(d->cols[sm].unit, "%");
    assert_string_equal(d->cols[temp].unit, "C");
    assert_string_equal(d->cols[col(d, "rxpci")].unit, "MB/s");
    CP_ASSERT_NEAR(ev_dmon_stat_of(d, EV_DMON_ALL, sm)->max, 25, 1e-12);  /* GPU 0 */
    CP_ASSERT_NEAR(ev_dmon_stat_of(d, EV_DMON_ALL, sm)->min, 18, 1e-12);
    CP_ASSERT_NEAR(ev_dmon_stat_of(d, EV_DMON_ALL, temp)->max, 84, 1e-12); /* GPU 1 */
    CP_ASSERT_NEAR(ev_dmon_stat_of(d, 1, temp)->mean, 84, 1e-12);
    CP_ASSERT_NEAR(ev_dmon_stat_of(d, 3, fb)->max, 11660, 1e-12);
    assert_int_equal(ev_dmon_stat_of(d, EV_DMON_ALL, sbecc)->n, 0); /* all "-" */
    assert_true(isnan(ev_dmon_stat_of(d, EV_DMON_ALL, sbecc)->mean));
    assert_int_equal(d->entities[2].gpu, 2);
    assert_int_equal(d->samples[0].line, 6);
    assert_int_equal(diag_total(&ev_last_diag), 0);
    ev_dmon_free(d);
}

/* Fixture: -o DT columns, repeated header, "-" value, a bad value, a short row. */
static void test_fixture_date_time(void **state)
{
    (void)state;
    ev_dmon *d = parse("dmon/nvidia-smi-dt-repeated-header.txt", 0);
    assert_int_equal(d->n_cols, 11); /* Date, Time and gpu are not value columns */
    assert_int_equal(d->n_entities, 2);
    assert_int_equal(d->n_samples, 6);
    assert_string_equal(d->samples[0].time, "20250301 10:00:01");
    assert_int_equal(d->entities[0].n_samples, 3);
    size_t sm = col(d, "sm"), gtemp = col(d, "gtemp");
    assert_true(isnan(ev_dmon_value(d, 4, gtemp))); /* "-" */
    assert_true(isnan(ev_dmon_value(d, 5, sm)));    /* "hot" */
    assert_int_equal(ev_last_diag.count[DIAG_EVIDENCE_BAD_VALUE], 1);
    assert_int_equal(ev_first_line(&ev_last_diag, DIAG_EVIDENCE_BAD_VALUE), 10);
    assert_int_equal(ev_last_diag.count[DIAG_EVIDENCE_BAD_ROW], 1);
    assert_int_equal(ev_first_line(&ev_last_diag, DIAG_EVIDENCE_BAD_ROW), 11);
    CP_ASSERT_NEAR(ev_dmon_stat_of(d, 0, sm)->mean, (98 + 97 + 99) / 3.0, 1e-12);
    assert_int_equal(ev_dmon_stat_of(d, 1, sm)->n, 2);
    ev_dmon_free(d);
}

/* Fixture: newer dcgmi with the "ID" line, two GPUs, N/A. */
static void test_fixture_dcgmi_two_gpus(void **state)
{
    (void)state;
    ev_dmon *d = parse("dmon/dcgmi-id-line-na-two-gpus.txt", 0);
    assert_int_equal(d->flavor, EV_DMON_DCGMI);
    assert_int_equal(d->n_entities, 2);
    assert_int_equal(d->entities[1].gpu, 1);
    size_t smocc = col(d, "SMOCC");
    assert_int_equal(ev_dmon_stat_of(d, 1, smocc)->n, 1);
    CP_ASSERT_NEAR(ev_dmon_stat_of(d, 0, col(d, "SMACT"))->mean, (0.812 + 0.790) / 2, 1e-12);
    assert_int_equal(diag_total(&ev_last_diag), 0);
    ev_dmon_free(d);
}

/* dcgmi with MIG: GPU instances ("GPU-I n") and the parent GPU are
 * entities of their own, each with its MIG kind (verdict fixture). */
static void test_fixture_dcgmi_mig(void **state)
{
    (void)state;
    ev_dmon *d = parse("verdict/dmon_dcgmi_mig.txt", 0);
    assert_int_equal(d->flavor, EV_DMON_DCGMI);
    assert_int_equal(d->n_entities, 3);
    assert_string_equal(d->entities[0].name, "GPU 0");
    assert_int_equal(d->entities[0].mig, EV_DMON_GPU);
    assert_string_equal(d->entities[1].name, "GPU-I 1");
    assert_int_equal(d->entities[1].mig, EV_DMON_GPU_I);
    assert_int_equal(d->entities[2].mig, EV_DMON_GPU_I);
    assert_int_equal(d->n_samples, 60);
    CP_ASSERT_NEAR(ev_dmon_stat_of(d, 2, col(d, "GRACT"))->max, 0.04, 0.011);
    const char *ci = "#Entity   SMACT\nID\nGPU-CI 3  0.500\n";
    ev_dmon *c = NULL;
    assert_int_equal(ev_parse_as(EV_DMON, ci, strlen(ci), "ci", (void **)&c, NULL), 0);
    assert_int_equal(c->entities[0].mig, EV_DMON_GPU_CI);
    ev_dmon_free(c);
    assert_int_equal(diag_total(&ev_last_diag), 0);
    ev_dmon_free(d);
}

static void test_not_dmon(void **state)
{
    (void)state;
    const char *text = "        GPU0    GPU1    CPU Affinity\nGPU0     X      NV12    0-7\n";
    ev_dmon *d = NULL;
    cp_error err;
    assert_int_equal(ev_parse_as(EV_DMON, text, strlen(text), "t.txt", (void **)&d, &err), CP_ERR_FORMAT);
    assert_null(d);
    assert_true(rd_dmon_sniff(text, strlen(text)) < 50);
    /* rows before any header are counted, not read */
    const char *orphan = "    0   100    50\n# gpu   pwr    sm\n    0   120    60\n";
    assert_int_equal(ev_parse_as(EV_DMON, orphan, strlen(orphan), "o.txt", (void **)&d, &err), 0);
    assert_int_equal(d->n_samples, 1);
    assert_int_equal(ev_last_diag.count[DIAG_EVIDENCE_ORPHAN_ROW], 1);
    assert_int_equal(ev_first_line(&ev_last_diag, DIAG_EVIDENCE_ORPHAN_ROW), 1);
    ev_dmon_free(d);
}

int main(void)
{
    const struct CMUnitTest fixtures[] = {
        cmocka_unit_test(test_fixture_date_time),
        cmocka_unit_test(test_fixture_dcgmi_two_gpus),
        cmocka_unit_test(test_not_dmon),
        cmocka_unit_test(test_fixture_dcgmi_mig),
    };
    const struct CMUnitTest samples[] = {
        cmocka_unit_test(test_dcgmi_triton),
        cmocka_unit_test(test_nvsmi_old_format),
    };
    int f = cmocka_run_group_tests_name("rd_dmon_fixtures", fixtures, NULL, NULL);
    int s = ev_have_data() ? cmocka_run_group_tests_name("rd_dmon_samples", samples, NULL, NULL) : 0;
    return ev_exit(f, s);
}
