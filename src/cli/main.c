/* main.c - chainprof's entry: find the command in the table and run it.
 * The only place that returns an exit code to the shell. */
#include "cli.h"
#include "../base/log.h"
#include "../base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* A heap that keeps its memory, for `analyze`.
 * Its time on a large trace went mostly to first touches of fresh arrays
 * (page faults, zeroing, TLB misses). Serving even the largest arrays from
 * the heap (mmap threshold 1 GiB) lets the per-rank temporaries reuse pages
 * instead of getting freshly zeroed ones from the kernel each time
 * (docs/PERFORMANCE.md). One arena for all threads: with the large
 * threshold, the reader threads' big arrays would otherwise fail in their
 * own (64 MiB) arenas and queue on the main one anyway, which took 1 -> 2
 * thread scaling from 1.9x to 1.5x. A 4 GiB trim threshold: freed arrays at
 * the top of the heap stay for the next phase instead of going back to the
 * kernel and being faulted in again (on a 4 M-event nsys export: 0.4 s of
 * system time instead of 0.8-1.8). 2 MiB pages (glibc.malloc.hugetlb=1) were
 * part of this on the first development VM (AMD EPYC: a third less CPU); on
 * the current one (Intel Xeon) they cost more than they saved, since every
 * partly used column's last huge page is zeroed whole: analyze of the
 * 1.08 GB bench set took 1.22x the CPU at -j 1 and 1.11x at -j 2 with them
 * (6-7 paired alternating runs, docs/PERFORMANCE.md "Issue 19"), so they are no
 * longer asked for. glibc offers the others (.mmap_threshold, .arena_max,
 * .trim_threshold) only as tunables, read once at start-up, so the command
 * re-executes itself once with them set, when its inputs pay for it
 * (cmd_analyze.c: many small files cost twice the memory and more time with
 * them). CHAINPROF_NO_THP=1 (the historical name) turns it off; any failure just
 * carries on without it. Children (nsys export) inherit the setting, which
 * only changes how their heap is backed. */
void cli_reexec_with_thp(char **argv)
{
    const char *tun = getenv("GLIBC_TUNABLES");
    if (getenv("CHAINPROF_NO_THP") || getenv("CHAINPROF_THP_DONE") ||
        (tun && (strstr(tun, "hugetlb") || strstr(tun, "mmap_threshold"))))
        return;
    char val[1024];
    int n = snprintf(val, sizeof val, "%s%s%s", tun ? tun : "", tun && *tun ? ":" : "",
                     "glibc.malloc.mmap_threshold=1073741824:glibc.malloc.arena_max=1:"
                     "glibc.malloc.trim_threshold=4294967296");
    if (n < 0 || (size_t)n >= sizeof val || setenv("GLIBC_TUNABLES", val, 1) != 0 ||
        setenv("CHAINPROF_THP_DONE", "1", 1) != 0)
        return;
    execv("/proc/self/exe", argv);
    /* still here: run as we are (the variables are harmless) */
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
