/* main.c - chainprof's entry: find the command in the table and run it.
 * The only place that returns an exit code to the shell. */
#include "cli.h"
#include "../base/log.h"
#include "../base/util.h"

#include <stdio.h>
#include <string.h>

static const cli_command commands[] = {
#define X(name, summary) { #name, summary, cmd_##name },
#include "commands.def"
#undef X
};

const cli_command *cli_commands(size_t *n)
{
    *n = CP_ARRAY_LEN(commands);
    return commands;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: chainprof <command> [options] [--] args\n\n"
               "Find where the time goes in AI training and inference jobs, layer by layer.\n\n"
               "commands:\n");
    for (size_t i = 0; i < CP_ARRAY_LEN(commands); i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n'chainprof <command> --help' lists a command's options; "
               "'chainprof help <command>' prints its manual.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (!strcmp(name, "--help") || !strcmp(name, "-h")) {
        usage(stdout);
        return CLI_EXIT_OK;
    }
    if (!strcmp(name, "--version"))
        name = "version";
    for (size_t i = 0; i < CP_ARRAY_LEN(commands); i++) {
        if (strcmp(commands[i].name, name) != 0)
            continue;
        cli_ctx ctx = { .cmd = commands[i].name, .argc = argc, .argv = argv,
                        .sub_argc = argc - 2, .sub_argv = argv + 2 };
        int rc = commands[i].fn(&ctx);
        cli_args_free(&ctx.args);
        cp_log_flush();
        return rc;
    }
    cp_log_error("'%s' is not a chainprof command", name);
    usage(stderr);
    return CLI_EXIT_USAGE;
}
