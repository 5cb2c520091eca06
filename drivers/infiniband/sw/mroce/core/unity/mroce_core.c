// SPDX-License-Identifier: GPL-2.0
/*
 * The whole protocol core as one translation unit, for the module
 * (Kbuild.core builds this file, not the others one by one): a call from
 * one core file into another, e.g. the connection engine's per-packet
 * calls into the path state (prx, ptx), congestion control, health and
 * the codec, can then be inlined or at least made a near call. Session
 * 44's jump-cache study (docs/experiments/s44-H-calls.md) found each such
 * call that stays out of line costs one TCG lookup per return and one per
 * entry across a page. The files are the same ones user space compiles
 * one by one; they must share no static names (user space compiles this
 * file on its own too, so a clash fails there as well). The small core
 * functions marked inline at their definition are inlined into the
 * callers here; their out-of-line copies serve the module's other files.
 */
#include "mroce_wire.c"
#include "mroce_bitmap.c"
#include "mroce_params.c"
#include "mroce_prx.c"
#include "mroce_ptx.c"
#include "mroce_rtt.c"
#include "mroce_health.c"
#include "mroce_cc.c"
#include "mroce_hint.c"
#include "mroce_stream.c"
#include "mroce_place.c"
#include "mroce_pick.c"
#include "mroce_hs.c"
#include "mroce_conn.c"
