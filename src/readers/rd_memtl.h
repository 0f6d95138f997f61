/* rd_memtl.h - PyTorch's raw memory timeline reader (rd_memtl.c): the
 * byte-source entry the fuzz target and tests use; the table entry
 * (rd_memtl_sniff, rd_memtl_read) is declared through readers.def. */
#ifndef CP_READERS_RD_MEMTL_H
#define CP_READERS_RD_MEMTL_H

#include "../base/error.h"
#include "../base/src.h"
#include "../model/timeline.h"

#include <stddef.h>

int rd_memtl_sniff(const char *path, const unsigned char *head, size_t n);
/* Read the records of src (named path in messages and diagnostics) into b. */
int rd_memtl_read_src(cp_src *src, const char *path, tl_builder *b, cp_error *err);

#endif
