/* rd_optrace.h - op timelines of the OSDI'25 straggler study's artifact
 * (see rd_optrace.c and docs/FORMATS.md "Op timelines"): the reader's
 * entry points, and one on a byte source for tests and fuzzing. */
#ifndef CP_READERS_RD_OPTRACE_H
#define CP_READERS_RD_OPTRACE_H

#include "reader.h"
#include "../base/src.h"

int rd_optrace_sniff(const char *path, const unsigned char *head, size_t n);
int rd_optrace_read(const char *path, tl_builder *b, const rd_opts *o, cp_error *err);
/* The same on an open byte source (the caller keeps and closes it); name
 * is used in messages and diagnostics. */
int rd_optrace_read_src(cp_src *src, const char *name, tl_builder *b, cp_error *err);

#endif
