/* diag.c - see diag.h. */
#include "diag.h"

#include <stdio.h>
#include <string.h>

static const char *const keys[] = {
#define X(e, key, desc) key,
#include "diag.def"
#undef X
};
static const char *const descs[] = {
#define X(e, key, desc) desc,
#include "diag.def"
#undef X
};

void diag_init(diag_set *d) { memset(d, 0, sizeof *d); }

void diag_count_n(diag_set *d, diag_code code, uint64_t n, const char *where_file, long long pos)
{
    if (!d || code >= DIAG__COUNT || n == 0)
        return;
    if (d->count[code] == 0 && where_file) {
        if (pos >= 0)
            snprintf(d->first[code], sizeof d->first[code], "%s:%lld", where_file, pos);
        else
            snprintf(d->first[code], sizeof d->first[code], "%s", where_file);
    }
    d->count[code] += n;
}

void diag_count(diag_set *d, diag_code code, const char *where_file, long long pos)
{
    diag_count_n(d, code, 1, where_file, pos);
}

void diag_merge(diag_set *into, const diag_set *from)
{
    for (int i = 0; i < DIAG__COUNT; i++) {
        if (!from->count[i])
            continue;
        if (!into->count[i])
            memcpy(into->first[i], from->first[i], sizeof into->first[i]);
        into->count[i] += from->count[i];
    }
}

uint64_t diag_total(const diag_set *d)
{
    uint64_t t = 0;
    for (int i = 0; i < DIAG__COUNT; i++)
        t += d->count[i];
    return t;
}

const char *diag_key(diag_code code) { return code < DIAG__COUNT ? keys[code] : "?"; }
const char *diag_desc(diag_code code) { return code < DIAG__COUNT ? descs[code] : "?"; }
