#include "core/simulated.h"

#if defined(JT_SMPI)
#include <simgrid/host.h>
#include <xbt/sysdep.h>

void jt_simulated_json(jt_json *j)
{
    sg_host_t self = sg_host_self(), *all = sg_host_list();
    size_t n = sg_host_count();
    jt_json_key(j, "simulated");
    jt_json_object(j);
    jt_json_kstr(j, "simulator", "SimGrid SMPI");
    jt_json_kint(j, "platform_hosts", (long long)n);
    jt_json_knum(j, "host_speed_flops", sg_host_get_speed(self)); /* per core */
    jt_json_kint(j, "host_cores", sg_host_core_count(self));
    /* One route, host 0 to host 1: on jostle's generated clusters every route is alike. */
    if (n >= 2) {
        jt_json_knum(j, "route_bandwidth_Bps", sg_host_get_route_bandwidth(all[0], all[1]));
        jt_json_knum(j, "route_latency_s", sg_host_get_route_latency(all[0], all[1]));
    }
    jt_json_end(j);
    xbt_free(all);
}
#else
void jt_simulated_json(jt_json *j)
{
    (void)j;
}
#endif
