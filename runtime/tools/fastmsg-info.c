/* SPDX-License-Identifier: BSD-3-Clause */
/* fastmsg-info: version, libfabric providers found, the provider fastmsg would use, and every
 * FM_* setting with its value and where the value came from.
 *   fastmsg-info             human-readable report
 *   fastmsg-info --markdown  the README's table of variables
 *   fastmsg-info --topology  where every rank of a job is (run it as a job: fastmsg-run -n 4
 *                            fastmsg-info --topology, mpirun, srun, ...; rank 0 prints)
 *   fastmsg-info --memory    the packet buffers rank 0's context holds after fm_init
 *                            (fm_stats.mem_*; alone, or as a job like --topology) */
#include <stdio.h>
#include <string.h>

#include "bootstrap.h"
#include "context.h"
#include "config.h"
#include "fastmsg.h"
#include "fm_build_config.h"
#include "topo.h"
#include "transport.h"

static void print_markdown(void)
{
    static const char *types[] = {"integer", "size", "boolean", "string"};
    printf("| variable | type | default | meaning |\n|---|---|---|---|\n");
    for (int i = 0; i < fm_config_nvars; i++) {
        const fm_config_var *v = &fm_config_vars[i];
        printf("| `%s` | %s | `%s` | %s |\n", v->name, types[v->type], v->def, v->doc);
    }
}

/* Join the job, and rank 0 prints the topology every rank agreed on at fm_init. */
static int print_topology(void)
{
    fm_context *ctx;
    int rc = fm_init(&ctx);
    if (rc) {
        fprintf(stderr, "fastmsg-info: fm_init: %s\n", fm_strerror(rc));
        return 1;
    }
    if (fm_rank(ctx) == 0 && fm_topo_print(ctx->topo, stdout) != FM_OK)
        rc = FM_ERR_INTERNAL;
    fflush(stdout);
    int fin = fm_finalize(ctx);
    return rc || fin ? 1 : 0;
}

/* Join the job, and rank 0 prints the packet buffers its context holds after fm_init. */
static int print_memory(void)
{
    fm_context *ctx;
    fm_stats st;
    int rc = fm_init(&ctx);
    if (rc) {
        fprintf(stderr, "fastmsg-info: fm_init: %s\n", fm_strerror(rc));
        return 1;
    }
    rc = fm_get_stats(ctx, &st);
    if (rc == FM_OK && fm_rank(ctx) == 0)
        printf("memory         rank 0 of %d after fm_init: receive %llu B, send %llu B, copy %llu "
               "B, registered %llu B, peak %llu B\n",
               fm_size(ctx), (unsigned long long)st.mem_recv_bytes,
               (unsigned long long)st.mem_send_bytes, (unsigned long long)st.mem_copy_bytes,
               (unsigned long long)st.mem_registered_bytes, (unsigned long long)st.mem_peak_bytes);
    fflush(stdout);
    int fin = fm_finalize(ctx);
    return rc || fin ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--markdown")) {
        print_markdown();
        return 0;
    }
    if (argc > 1 && !strcmp(argv[1], "--topology"))
        return print_topology();
    if (argc > 1 && !strcmp(argv[1], "--memory"))
        return print_memory();
    if (argc > 1) {
        fprintf(stderr, "usage: fastmsg-info [--markdown | --topology | --memory]\n");
        return 2;
    }
    char err[256], buf[160];
    fm_config cfg;
    int bad = fm_config_load(&cfg, NULL, err, sizeof err);
    printf("fastmsg        %s (PMIx bootstrap %s)\n", fm_version(),
           FM_HAVE_PMIX ? "built in" : "not built");
    char provs[512];
    fm_tp_list_providers(provs, sizeof provs);
    printf("providers      %s\n", provs);
    printf("bootstrap      %s would be used here\n", fm_boot_detect()->name);
    if (bad) {
        printf("configuration  ERROR: %s\n", err);
        return 1;
    }
    printf("provider       %s\n\nsettings:\n", cfg.provider);
    for (int i = 0; i < fm_config_nvars; i++)
        printf("  %-16s = %-12s (%s)\n", fm_config_vars[i].name,
               fm_config_value_str(&cfg, i, buf, sizeof buf),
               cfg.source[i] == FM_CFG_FROM_ENV ? "environment" : "default");
    return 0;
}
