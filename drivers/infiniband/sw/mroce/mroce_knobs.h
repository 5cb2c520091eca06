/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Run-time tunables of the transport: one table of module parameters, each
 * a field of mroce_prm (mroce_knobs.c; docs/protocol.md "Defaults").
 */
#ifndef MROCE_KNOBS_H
#define MROCE_KNOBS_H

/* Fill mroce_prm at module load: defaults plus the parameters given. */
int mroce_knobs_init(void);

#endif /* MROCE_KNOBS_H */
