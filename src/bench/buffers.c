/* The state of the buffers as an option of every benchmark with a communicating thread. */
#include "bench/bench.h"

#include "core/errors.h"

jt_p2p_buffers jt_bench_buffers(const jt_opts *o, jt_p2p_mode mode)
{
    if (jt_opt_flag(o, "cold"))
        jt_usage_error("--cold is no longer an option: it is one state of the buffers among "
                       "others, --buffers cold");
    jt_p2p_buffers b = (jt_p2p_buffers)jt_opt_choice(o, "buffers");
    const char *why = jt_p2p_buffers_refusal(mode, b);
    if (why)
        jt_usage_error("--buffers %s is not allowed with --mode %s: %s", jt_p2p_buffers_names[b],
                       jt_p2p_mode_names[mode], why);
    return b;
}

void jt_bench_buffers_json(jt_json *j, jt_p2p_mode mode, jt_p2p_buffers buffers)
{
    static const char *const what[] = {
        "OSU's conventions: the echo is sent from its own send buffer; a window of stream or "
        "bidir reuses one send and one receive buffer per side; put and get one slot per message",
        "one slot per message in flight",
        "the echo sends back the buffer it received into (lines dirtied by the transfer)",
        "frames rotated through twice the last-level cache: no byte is in cache"};
    jt_json_key(j, "buffers");
    jt_json_object(j);
    jt_json_kstr(j, "state", jt_p2p_buffers_names[buffers]);
    jt_json_kstr(j, "mode", jt_p2p_mode_names[mode]);
    jt_json_kstr(j, "what", what[buffers]);
    jt_json_end(j);
}
