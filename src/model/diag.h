/* diag.h - counted input damage.
 *
 * Bad records never abort a run: the code that drops, clamps or cannot parse
 * an item counts it here under a named code (diag.def) and remembers where
 * the first one was, so the report can say "3 412 events without dur, first
 * at rank-0.json:18231". A diag_set is plain data: readers fill their own on
 * their thread, and diag_merge adds them up afterwards.
 */
#ifndef CP_MODEL_DIAG_H
#define CP_MODEL_DIAG_H

#include <stdint.h>

typedef enum diag_code {
#define X(e, key, desc) DIAG_##e,
#include "diag.def"
#undef X
    DIAG__COUNT
} diag_code;

typedef struct diag_set {
    uint64_t count[DIAG__COUNT];
    char first[DIAG__COUNT][192]; /* "file:offset" or "file:line" of the first occurrence */
} diag_set;

void diag_init(diag_set *d);
/* Count one occurrence; where may be NULL. pos < 0 means unknown. */
void diag_count(diag_set *d, diag_code code, const char *where_file, long long pos);
void diag_count_n(diag_set *d, diag_code code, uint64_t n, const char *where_file, long long pos);
void diag_merge(diag_set *into, const diag_set *from);
uint64_t diag_total(const diag_set *d);
const char *diag_key(diag_code code);
const char *diag_desc(diag_code code);

#endif
