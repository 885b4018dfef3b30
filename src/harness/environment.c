/* What set the result besides the options (Hoefler & Belli's rule 9): the environment
 * variables that tune the MPI library, its transports, OpenMP and BLAS, and the kernel's
 * settings that move timings: transparent huge pages, NUMA balancing, the CPU frequency
 * driver, governor and boost, SMT, and each NIC's link state and speed.  Each is read where
 * the system exposes it and left out where it does not (a container, another OS). */
#include "harness/internal.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

/* Prefixes of the variables recorded: Open MPI (and PMIx, PRRTE), MPICH (and Intel MPI), UCX,
 * libfabric, PSM2, UCC, HCOLL, OpenMP, and the BLAS libraries. */
static const char *const prefixes[] = {
    "OMPI_MCA_", "PMIX_MCA_", "PRTE_MCA_", "MPIR_CVAR_", "MPICH_", "I_MPI_", "UCX_", "FI_",
    "PSM2_", "UCC_", "HCOLL_", "OMP_", "GOMP_", "KMP_", "OPENBLAS_", "GOTO_", "MKL_", "BLIS_",
    NULL,
};

/* What the launchers set for their own bookkeeping (job ids, URIs, session directories, the
 * rank's number): different in every job and on every rank, they would hide what differs. */
static const char *const launcher_own[] = {
    "OMPI_MCA_orte_", "OMPI_MCA_prte_", "OMPI_MCA_ess", "OMPI_MCA_initial_wdir", "OMPI_MCA_pmix=",
    "OMPI_MCA_shmem_RUNTIME_QUERY_hint", "PMIX_MCA_mca_base_component_show_load_errors",
    "PMIX_MCA_psec=", NULL,
};

static int wanted(const char *kv)
{
    for (int i = 0; launcher_own[i]; i++)
        if (strncmp(kv, launcher_own[i], strlen(launcher_own[i])) == 0)
            return 0;
    for (int i = 0; prefixes[i]; i++)
        if (strncmp(kv, prefixes[i], strlen(prefixes[i])) == 0)
            return 1;
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The first line of a file, without its newline; NULL when unreadable or empty. */
static const char *read_line(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    char *got = fgets(buf, (int)len, f);
    fclose(f);
    if (!got)
        return NULL;
    buf[strcspn(buf, "\n")] = '\0';
    return buf[0] ? buf : NULL;
}

/* "always [madvise] never": the bracketed choice. */
static const char *selected(const char *path, char *buf, size_t len)
{
    const char *v = read_line(path, buf, len);
    char *open_ = v ? strchr(buf, '[') : NULL, *close_ = open_ ? strchr(open_, ']') : NULL;
    if (!close_)
        return v;
    *close_ = '\0';
    return open_ + 1;
}

static void kfile(jt_json *j, const char *key, const char *path)
{
    char buf[256];
    const char *v = read_line(path, buf, sizeof buf);
    if (v)
        jt_json_kstr(j, key, v);
}

static void variables(jt_json *j)
{
    size_t n = 0;
    for (char **e = environ; *e; e++)
        n += wanted(*e);
    char **v = malloc((n ? n : 1) * sizeof *v);
    n = 0;
    for (char **e = environ; *e; e++)
        if (wanted(*e))
            v[n++] = *e;
    qsort(v, n, sizeof *v, cmp_str);
    jt_json_key(j, "variables");
    jt_json_object(j);
    for (size_t i = 0; i < n; i++) {
        char key[256];
        size_t k = strcspn(v[i], "=");
        snprintf(key, sizeof key, "%.*s", (int)(k < 255 ? k : 255), v[i]);
        jt_json_kstr(j, key, v[i][k] ? v[i] + k + 1 : "");
    }
    jt_json_end(j);
    free(v);
}

static void nics(jt_json *j)
{
    DIR *d = opendir("/sys/class/net");
    jt_json_key(j, "nics");
    jt_json_array(j);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.' || strcmp(e->d_name, "lo") == 0)
            continue;
        char path[512], buf[64];
        jt_json_object(j);
        jt_json_kstr(j, "name", e->d_name);
        snprintf(path, sizeof path, "/sys/class/net/%s/operstate", e->d_name);
        kfile(j, "state", path);
        snprintf(path, sizeof path, "/sys/class/net/%s/speed", e->d_name);
        const char *s = read_line(path, buf, sizeof buf); /* Mb/s; -1 or unreadable when down */
        if (s && atol(s) > 0)
            jt_json_kint(j, "speed_mbps", atol(s));
        jt_json_end(j);
    }
    if (d)
        closedir(d);
    d = opendir("/sys/class/infiniband");
    while (d && (e = readdir(d))) { /* each port of each HCA: state and rate */
        if (e->d_name[0] == '.')
            continue;
        for (int port = 1; port <= 4; port++) {
            char path[512], buf[64];
            snprintf(path, sizeof path, "/sys/class/infiniband/%s/ports/%d/state", e->d_name,
                     port);
            if (!read_line(path, buf, sizeof buf))
                break;
            char name[300];
            snprintf(name, sizeof name, "%s/%d", e->d_name, port);
            jt_json_object(j);
            jt_json_kstr(j, "name", name);
            jt_json_kstr(j, "state", buf); /* "4: ACTIVE" */
            snprintf(path, sizeof path, "/sys/class/infiniband/%s/ports/%d/rate", e->d_name, port);
            kfile(j, "rate", path);
            jt_json_end(j);
        }
    }
    if (d)
        closedir(d);
    jt_json_end(j);
}

void jt_environment_json(jt_json *j)
{
    char buf[256];
    jt_json_object(j);
    variables(j);
    const char *v = selected("/sys/kernel/mm/transparent_hugepage/enabled", buf, sizeof buf);
    if (v)
        jt_json_kstr(j, "thp", v);
    v = selected("/sys/kernel/mm/transparent_hugepage/defrag", buf, sizeof buf);
    if (v)
        jt_json_kstr(j, "thp_defrag", v);
    kfile(j, "numa_balancing", "/proc/sys/kernel/numa_balancing");
    kfile(j, "cpufreq_driver", "/sys/devices/system/cpu/cpu0/cpufreq/scaling_driver");
    kfile(j, "cpufreq_governor", "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
    /* Boost: acpi-cpufreq's switch, or intel_pstate's inverse one. */
    if (read_line("/sys/devices/system/cpu/cpufreq/boost", buf, sizeof buf))
        jt_json_kstr(j, "boost", buf);
    else if (read_line("/sys/devices/system/cpu/intel_pstate/no_turbo", buf, sizeof buf))
        jt_json_kstr(j, "boost", strcmp(buf, "0") == 0 ? "1" : "0");
    kfile(j, "smt_active", "/sys/devices/system/cpu/smt/active");
    kfile(j, "smt_control", "/sys/devices/system/cpu/smt/control");
    nics(j);
    jt_json_end(j);
}
