/* What a simulated run (SimGrid SMPI build) ran on: the platform's hosts, as SimGrid reports
 * them.  The "machine" of such a run is the host that simulated it, not the simulated nodes. */
#ifndef JT_SIMULATED_H
#define JT_SIMULATED_H

#include "core/json.h"

/* Adds "simulated": {...} to the open object j in the SMPI build; nothing otherwise. */
void jt_simulated_json(jt_json *j);

#endif
