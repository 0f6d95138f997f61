/* output.c - where reports go: stdout in --format, and every -o FILE in the
 * format of its extension, each written atomically (temp file + rename) and
 * never over one of the run's inputs. Rendering happens once per format. */
#include "cli.h"
#include "../base/afile.h"
#include "../base/log.h"
#include "../base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int render_to(const rep_report *r, const render_format *f, cp_buf *out, const render_opts *ro)
{
    cp_error err;
    cp_error_clear(&err);
    if (f->fn(r, out, ro, &err) < 0)
        return cli_fail(&err);
    return 0;
}

int cli_emit(const cli_ctx *ctx, const rep_report *r, char *const *inputs, size_t n_inputs)
{
    const char *fmt = cli_has(ctx, CLI_O_JSON) ? "json" : cli_get(ctx, CLI_O_FORMAT);
    if (!fmt)
        fmt = "text";
    const render_format *stdout_fmt = render_find(fmt);
    if (!stdout_fmt)
        return cli_usage_error(ctx, "unknown format '%s' (one of %s)", fmt, render_names());
    render_opts ro = { .color = isatty(1) && !getenv("NO_COLOR") && !cli_has(ctx, CLI_O_NO_COLOR) };

    const char *outs[64];
    size_t n_out = cli_get_all(ctx, CLI_O_OUTPUT, outs, CP_ARRAY_LEN(outs));
    if (n_out > CP_ARRAY_LEN(outs))
        return cli_usage_error(ctx, "at most %zu -o files", CP_ARRAY_LEN(outs));
    bool own = strcmp(ctx->cmd, "analyze") == 0; /* analyze writes the formats that need its traces */
    if (!stdout_fmt->fn && !own)
        return cli_usage_error(ctx, "--format %s: only analyze writes it (it needs the traces)", fmt);
    for (size_t i = 0; i < n_out; i++) {
        if (!render_for_path(outs[i]))
            return cli_usage_error(ctx, "-o %s: cannot tell the format from the extension (%s)", outs[i],
                                   ".txt .json .csv .html .perfetto.json");
        if (!render_for_path(outs[i])->fn && !own)
            return cli_usage_error(ctx, "-o %s: only analyze writes %s (it needs the traces)", outs[i],
                                   render_for_path(outs[i])->name);
        for (size_t k = 0; k < n_inputs; k++)
            if (!strcmp(outs[i], inputs[k]) || cp_same_file(outs[i], inputs[k]))
                return cli_usage_error(ctx, "-o %s: refusing to overwrite an input file", outs[i]);
    }
    int rc = 0;
    for (size_t i = 0; i < n_out && !rc; i++) {
        if (!render_for_path(outs[i])->fn)
            continue; /* the command wrote it */
        render_opts fo = { 0 };
        cp_buf b = CP_BUF_INIT;
        rc = render_to(r, render_for_path(outs[i]), &b, &fo);
        if (!rc) {
            cp_error err;
            cp_error_clear(&err);
            if (cp_afile_write(outs[i], b.data ? b.data : "", b.len, &err) < 0)
                rc = cli_fail(&err);
        }
        cp_buf_free(&b);
    }
    /* stdout: skipped when only files were asked for and no --format given */
    if (!rc && stdout_fmt->fn && (n_out == 0 || cli_has(ctx, CLI_O_FORMAT) || cli_has(ctx, CLI_O_JSON))) {
        cp_buf b = CP_BUF_INIT;
        rc = render_to(r, stdout_fmt, &b, &ro);
        if (!rc && b.len && fwrite(b.data, 1, b.len, stdout) != b.len) {
            cp_log_error("cannot write to standard output");
            rc = CLI_EXIT_FAIL;
        }
        cp_buf_free(&b);
        if (fflush(stdout) != 0 && !rc) {
            cp_log_error("cannot write to standard output");
            rc = CLI_EXIT_FAIL;
        }
    }
    return rc;
}
