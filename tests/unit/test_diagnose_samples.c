/* test_diagnose_samples.c - acceptance: every real failure log under
 * ../shared/data/logs/{pytorch,nccl} whose "#@" lines state a cause is
 * diagnosed with that cause as the top verdict (one test per file).
 *
 * The files are read in place (never copied). Their "#@" provenance lines are
 * blanked before diagnosis - a user's file has none - keeping line numbers,
 * so evidence lines still point at the real file. A last test fails when a
 * sample appears in those folders that this table does not list, so a new
 * sample cannot be silently left untested. Exit 77 (skip) without the data.
 */
#include "test_util.h"

#include "diag/diag.h"

#include <dirent.h>

typedef struct sample {
    const char *rel;  /* under logs/ */
    const char *code; /* expected top verdict; NULL = no verdict (not a fault) */
    const char *title_has; /* a fact the title must name; NULL = none */
} sample;

static const sample k_samples[] = {
    {"pytorch/cuda-oom-forward-b200-tried-to-allocate-55gib.txt", "oom_oversized", "forward phase"},
    {"pytorch/unhandled-system-error-connection-refused-bad-node.txt", "nccl_connect_failed", "10.148.3.247"},
    {"pytorch/watchdog-600000ms-new-format-last-enqueued-llamafactory7396.txt", "nccl_timeout_stall", "SeqNum=1580"},
    {"pytorch/watchdog-timeout-desync-report-collective-mismatch.txt", "nccl_desync", "rank 1"},
    {"pytorch/xid79-fallen-off-bus-multiline-dmesg-nvsentinel155.txt", "gpu_fell_off_bus", "0000:b3:00.0"},
    {"nccl/aws-v100-no-efa-ofi-warn-socket-fallback-nccl248-nccl398.txt", "nccl_socket_fallback", "NET/Socket"},
    {"nccl/h100-nccl2243-nvls-ibext-sharp-no-prefix-nccl1584.txt", NULL, NULL},
    {"nccl/h800-8gpu-nvls-not-available-0-nvls-channels-nccl892.txt", "nvls_unavailable", "H800"},
    {"nccl/h800-roce-gid3-gdr-error4-vendor81-nccl1052.txt", "ib_gdr_pcie_acs", "vendor err 81"},
    {"nccl/nccl256-ib-no-gdrdma-question-nv-peer-memory56.txt", "gdr_disabled", "2 nodes"},
    {"nccl/roce-error12-vendor129-fixed-gid-index3-nccl426.txt", "ib_retry_exceeded", "vendor err 129"},
};

/* Read a sample and blank its "#@" lines (newlines kept). */
static char *load_sample(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    *len = fread(buf, 1, (size_t)n, f);
    fclose(f);
    for (size_t i = 0; i + 1 < *len; i++)
        if ((i == 0 || buf[i - 1] == '\n') && buf[i] == '#' && buf[i + 1] == '@')
            while (i < *len && buf[i] != '\n') buf[i++] = ' ';
    return buf;
}

static void test_sample(void **state)
{
    const sample *s = *state;
    char rel[512], path[1024];
    snprintf(rel, sizeof rel, "logs/%s", s->rel);
    if (!cp_test_data(rel, path, sizeof path)) skip();
    size_t len;
    char *buf = load_sample(path, &len);
    dg_ctx *c = dg_new();
    assert_int_equal(dg_add_buffer(c, path, buf, len, NULL), 0);
    dg_run(c);
    if (!s->code) {
        if (c->n_verdicts) fail_msg("%s: expected no verdict, got %s (%.2f)", s->rel, c->verdicts[0].code, c->verdicts[0].confidence);
    } else {
        if (c->n_verdicts == 0) fail_msg("%s: no verdict, expected %s", s->rel, s->code);
        if (strcmp(c->verdicts[0].code, s->code) != 0)
            fail_msg("%s: top verdict %s (%.2f), expected %s", s->rel, c->verdicts[0].code, c->verdicts[0].confidence, s->code);
        if (s->title_has && !strstr(c->verdicts[0].title, s->title_has))
            fail_msg("%s: title \"%s\" lacks \"%s\"", s->rel, c->verdicts[0].title, s->title_has);
        /* evidence cites real lines of the file, after the #@ header */
        assert_true(c->verdicts[0].n_evidence > 0);
        assert_true(c->verdicts[0].evidence[0].line > 1);
        assert_true(c->verdicts[0].n_steps > 0);
    }
    dg_free(c);
    free(buf);
}

/* Every sample with a "#@" problem line in the two folders is in the table. */
static void test_all_listed(void **state)
{
    (void)state;
    static const char *const dirs[] = {"logs/pytorch", "logs/nccl"};
    for (size_t d = 0; d < 2; d++) {
        char path[1024];
        if (!cp_test_data(dirs[d], path, sizeof path)) skip();
        DIR *dir = opendir(path);
        assert_non_null(dir);
        struct dirent *de;
        while ((de = readdir(dir)) != NULL) {
            if (de->d_name[0] == '.') continue;
            char rel[512];
            snprintf(rel, sizeof rel, "%s/%s", dirs[d] + 5, de->d_name);
            bool found = false;
            for (size_t i = 0; i < sizeof k_samples / sizeof k_samples[0]; i++)
                if (strcmp(k_samples[i].rel, rel) == 0) found = true;
            if (!found) fail_msg("sample %s is not in the acceptance table", rel);
        }
        closedir(dir);
    }
}

int main(void)
{
    char probe[1024];
    if (!cp_test_data("logs", probe, sizeof probe)) return 77;
    struct CMUnitTest tests[sizeof k_samples / sizeof k_samples[0] + 1];
    size_t n = 0;
    for (size_t i = 0; i < sizeof k_samples / sizeof k_samples[0]; i++)
        tests[n++] = (struct CMUnitTest){k_samples[i].rel, test_sample, NULL, NULL, (void *)&k_samples[i]};
    tests[n++] = (struct CMUnitTest){"all samples listed", test_all_listed, NULL, NULL, NULL};
    return _cmocka_run_group_tests("diagnose_samples", tests, n, NULL, NULL);
}
