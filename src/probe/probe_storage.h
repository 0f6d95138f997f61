/* probe_storage.h - pure parts of the storage probe (unit-tested). */
#ifndef CP_PROBE_PROBE_STORAGE_H
#define CP_PROBE_PROBE_STORAGE_H

/* Stall a compute loop saw: its wall time minus `steps` undisturbed steps
 * of step_s each, never negative. */
double probe_ckpt_stall_s(double loop_s, int steps, double step_s);

#endif
