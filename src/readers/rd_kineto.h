/* rd_kineto.h - the PyTorch profiler (Kineto) Chrome-trace reader, the parts
 * other code and tests use besides the reader table entry (reader.h).
 *
 * The reader streams the JSON through the pull tokenizer (base/jsontok.h)
 * into one tl_builder; docs/FORMATS.md ("Kineto traces") lists what it reads
 * and how damage is counted.
 */
#ifndef CP_READERS_RD_KINETO_H
#define CP_READERS_RD_KINETO_H

#include "../base/error.h"
#include "../base/src.h"
#include "../model/timeline.h"
#include "reader.h"

#include <stddef.h>
#include <stdint.h>

int rd_kineto_sniff(const char *path, const unsigned char *head, size_t n);
int rd_kineto_read(const char *path, tl_builder *b, const rd_opts *o, cp_error *err);

/* Read an already opened byte source (borrowed; not closed) into b. name is
 * used in messages and diagnostics and for the rank-from-file-name rule.
 * Returns 0 (damage counted in the builder's diagnostics) or a negative
 * status: CP_ERR_FORMAT when the input is not a Chrome trace at all,
 * CP_ERR_IO when the source cannot be read. */
int rd_kineto_read_src(cp_src *src, const char *name, tl_builder *b, cp_error *err);


#endif
