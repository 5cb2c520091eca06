// SPDX-License-Identifier: GPL-2.0
/*
 * Instantiates the tracepoints declared in mroce_trace.h. Callers include
 * mroce_trace.h and call trace_mroce_<event>(); a disabled tracepoint costs
 * a static branch.
 */
#define CREATE_TRACE_POINTS
#include "mroce_trace.h"
