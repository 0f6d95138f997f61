/* cmd_help.c - `chainprof help [COMMAND]`: the manual pages, compiled in
 * from docs/man/chainprof-<command>.txt so they always match the binary. */
#include "cli.h"

#include <stdio.h>
#include <string.h>

typedef struct man_page {
    const char *name;
    const char *text;
} man_page;
extern const man_page cli_man_pages[];
extern const size_t cli_n_man_pages;

const char *cli_man_page(const char *cmd)
{
    for (size_t i = 0; i < cli_n_man_pages; i++)
        if (!strcmp(cli_man_pages[i].name, cmd))
            return cli_man_pages[i].text;
    return NULL;
}

static const cli_opt opts[] = { { 0 } };

int cmd_help(cli_ctx *ctx)
{
    bool done;
    int rc = cli_parse_cmd(ctx, opts, 0, false, &done);
    if (rc || done)
        return rc;
    const char *topic = ctx->args.n_pos ? ctx->args.pos[0] : "chainprof";
    const char *text = cli_man_page(topic);
    if (!text) {
        size_t n;
        const cli_command *cmds = cli_commands(&n);
        fprintf(stderr, "chainprof: no manual for '%s'; manuals:", topic);
        for (size_t i = 0; i < n; i++)
            if (cli_man_page(cmds[i].name))
                fprintf(stderr, " %s", cmds[i].name);
        fprintf(stderr, "\n");
        return CLI_EXIT_USAGE;
    }
    fputs(text, stdout);
    return CLI_EXIT_OK;
}
