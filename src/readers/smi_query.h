/* smi_query.h - reader of `nvidia-smi -q` (and `-q -d ECC,ROW_REMAPPER,
 * PAGE_RETIREMENT`) text output: per GPU, the ECC error counters, retired
 * pages and row-remapping state; facts in src/model/ev_smiq.h.
 *
 * The format is an indented "Key : Value" tree; a GPU starts at an
 * unindented "GPU 00000000:07:00.0" line (an excerpt that starts at a
 * section such as "Remapped Rows" gets one anonymous GPU). The reader keeps
 * the chain of section titles by indentation ("ECC Errors" > "Volatile" >
 * "DRAM Uncorrectable") and adds up the counters it knows in both layouts:
 * Ampere+ ("SRAM Correctable", "DRAM Uncorrectable", ...) and pre-Ampere
 * ("Single Bit" / "Double Bit" > "Total"). "N/A" values stay unknown (-1).
 * An RD_EV_ALONE reader of the evidence table (evidence.h).
 */
#ifndef CP_READERS_SMI_QUERY_H
#define CP_READERS_SMI_QUERY_H

#include "evidence.h"

RD_EV_DECLARE(smiq);

#endif
