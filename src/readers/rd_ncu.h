/* rd_ncu.h - reader for Nsight Compute results (ncu --csv details page,
 * ncu --csv --page raw, ncu's plain-text details); facts in
 * src/model/ev_ncu.h, format rules atop rd_ncu.c and in docs/FORMATS.md
 * ("Nsight Compute results").
 */
#ifndef CP_READERS_RD_NCU_H
#define CP_READERS_RD_NCU_H

#include "evidence.h"

RD_EV_DECLARE(ncu);
/* .ncu-rep through `ncu --import FILE --csv --page raw` (rd_ncu_rep.c). */
RD_EV_FILE_DECLARE(ncurep);
/* 0, or CP_ERR_UNAVAILABLE (err says the exact export command) for an
 * .ncu-rep when ncu is not on PATH: analyze stops with exit 5. */
int rd_ncurep_ready(const char *path, cp_error *err);

/* ncu's unit string -> dimension (ev_ncu_dim) and multiplier into its base
 * unit; *unitless when empty. 0, or -1 for a unit the reader does not know. */
int rd_ncu_unit(const char *u, size_t n, int *dim, double *mul, int *unitless);
/* A value as ncu prints it ("54,207,744", "1.24", "n/a", "(!) n/a"): 0 and
 * *v, 1 for n/a, -1 when it is not a number. */
int rd_ncu_value(const char *p, size_t n, double *v);

#endif
