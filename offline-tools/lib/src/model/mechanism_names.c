/* Printable names of the sampling mechanisms recorded in traces (INFO's
 * mechanism, STATS' kernel_sampling). */
#include "sprof/trace_reader.h"

const char *sprof_mechanism_name(uint32_t mech)
{
    switch (mech) {
    case SPROF_MECH_NONE: return "none";
    case SPROF_MECH_PERF_EVENT: return "perf_event";
    case SPROF_MECH_CPUCLOCK_PACED: return "cpuclock_paced";
    case SPROF_MECH_POSIX_TIMER: return "posix_timer";
    case SPROF_MECH_ITIMER: return "itimer";
    case SPROF_MECH_WALL: return "wall";
    case SPROF_MECH_WALL_PERF: return "wall_perf";
    default: return "unknown";
    }
}

const char *sprof_kernel_sampling_name(uint32_t how)
{
    switch (how) {
    case SPROF_KSAMPLE_NONE: return "none";
    case SPROF_KSAMPLE_PERF: return "perf_event";
    case SPROF_KSAMPLE_TICK: return "tick";
    case SPROF_KSAMPLE_PACER: return "pacer";
    default: return "unknown";
    }
}

const char *sprof_kernel_tick_remedy(uint32_t mech)
{
    if (mech == SPROF_MECH_CPUCLOCK_PACED)
        return "the cpuclock pacer could not signal from the threads' own CPUs (a real-time thread, a cpuset, "
               "or SPROF_PACER=remote), where it draws kernel time at the asked rate";
    return "SPROF_TIMER=cpuclock draws it at the asked rate (perf_event would with perf_event_paranoid <= 1 "
           "or CAP_PERFMON)";
}
