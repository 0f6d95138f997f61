/* comm_shard.h - sharing input files out over processes by size (see comm_shard.c). */
#ifndef CP_COMM_COMM_SHARD_H
#define CP_COMM_COMM_SHARD_H

#include <stddef.h>
#include <stdint.h>

/* owner[i] = the process (0..nproc-1) that reads file i of size bytes[i];
 * load[nproc] (optional) receives each process's total bytes. Deterministic
 * for the same sizes. nproc >= 1. */
void comm_shard_by_size(const uint64_t *bytes, size_t n, int nproc, int32_t *owner, uint64_t *load);

#endif
