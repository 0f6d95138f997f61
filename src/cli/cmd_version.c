/* cmd_version.c - `chainprof version`: the version and the optional parts
 * this build can use. */
#include "cli.h"

#include <stdio.h>

#ifndef CHAINPROF_VERSION
#define CHAINPROF_VERSION "0.0.0"
#endif

static const cli_opt opts[] = { { 0 } };

int cmd_version(cli_ctx *ctx)
{
    bool done;
    int rc = cli_parse_cmd(ctx, opts, 0, false, &done);
    if (rc || done)
        return rc;
    printf("chainprof %s\n", CHAINPROF_VERSION);
    return CLI_EXIT_OK;
}
