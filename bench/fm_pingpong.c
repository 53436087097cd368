/* fm-pingpong: one-way latency, bandwidth and message rate between two fastmsg ranks, for
 * message sizes from 0 B to 4 MiB (or --min/--max), each the median of several runs.
 *
 *   fastmsg-run -n 2 fm-pingpong [options]      (-h lists them)
 *
 * Rank 0 prints the table; every rank reports its own errors on stderr. See bench/README.md
 * for what is measured and how. */
#include <stdio.h>
#include <stdlib.h>

#include "pp.h"
#include "stats.h"

/* The run's settings as fastmsg reads them; the defaults are runtime/util/config_table.h's, the
 * same that fastmsg-info prints. */
static const char *setting(const char *name, const char *dflt)
{
    const char *v = getenv(name);
    return v && *v ? v : dflt;
}

static void print_header(const pp_opts *o, fm_context *ctx, const pp_label *lb)
{
    if (!o->csv) {
        printf("# fm-pingpong (fastmsg %s): %d ranks, provider %s, FM_PACKET_SIZE %s, "
               "FM_CREDITS %s\n",
               fm_version(), fm_size(ctx), lb->provider, lb->packet_size, lb->credits);
        printf("# median of %d repeats; progress by fm_extract polling; receive by %s\n",
               o->repeats, o->use_receive ? "fm_receive in the handler" : "fm_stream_deliver");
    }
    pp_print_head(o);
}

/* Every repeat of one size: latency then bandwidth, so drift in the machine hits both. */
static int run_size(pp_link *l, const pp_opts *o, size_t size, pp_row *row)
{
    double lat[PP_MAX_REPEAT], bw[PP_MAX_REPEAT], rate[PP_MAX_REPEAT];
    int rc = FM_OK;
    for (int r = 0; r < o->repeats && rc == FM_OK; r++) {
        pp_sample s = {0, 0, 0};
        if (o->do_lat)
            rc = pp_measure_latency(l, o, size, &s);
        if (rc == FM_OK && o->do_bw)
            rc = pp_measure_bandwidth(l, o, size, &s);
        lat[r] = s.lat_us;
        bw[r] = s.bw_mbs;
        rate[r] = s.rate_mps;
    }
    *row = (pp_row){.size = size,
                    .lat_iters = pp_lat_iters(o, size),
                    .bw_msgs = pp_bw_windows(o, size) * o->window,
                    .median = {bench_median(lat, o->repeats), bench_median(bw, o->repeats),
                               bench_median(rate, o->repeats)}};
    return rc;
}

static int sweep(pp_link *l, const pp_opts *o, const pp_label *lb)
{
    size_t sizes[PP_MAX_SIZES];
    int n = pp_sizes(o, sizes), rc = FM_OK;
    for (int i = 0; i < n && rc == FM_OK; i++) {
        pp_row row;
        rc = run_size(l, o, sizes[i], &row);
        if (rc == FM_OK && l->me == 0)
            pp_print_row(o, lb, &row);
        else if (rc != FM_OK)
            fprintf(stderr, "fm-pingpong: rank %d: error at %zu B: %s\n", l->me, sizes[i],
                    fm_strerror(rc));
    }
    return rc;
}

int main(int argc, char **argv)
{
    pp_opts o;
    int prc = pp_parse(argc, argv, &o);
    if (prc)
        return prc > 0 ? 0 : 2;
    fm_context *ctx;
    int rc = fm_init(&ctx);
    if (rc) {
        fprintf(stderr, "fm-pingpong: fm_init: %s\n", fm_strerror(rc));
        return 1;
    }
    int status = 0;
    pp_link l;
    if (fm_size(ctx) != 2) {
        if (fm_rank(ctx) == 0)
            fprintf(stderr, "fm-pingpong: needs exactly 2 ranks (fastmsg-run -n 2), not %d\n",
                    fm_size(ctx));
        status = 2;
    } else if ((rc = pp_link_init(&l, ctx, &o)) != FM_OK) {
        fprintf(stderr, "fm-pingpong: rank %d: setup: %s\n", fm_rank(ctx), fm_strerror(rc));
        pp_link_fini(&l);
        status = 1;
    } else {
        pp_label lb = {setting("FM_PROVIDER", "shm"), setting("FM_PACKET_SIZE", "default"),
                       setting("FM_CREDITS", "default")};
        if (l.me == 0)
            print_header(&o, ctx, &lb);
        if (sweep(&l, &o, &lb) != FM_OK)
            status = 1;
        if (l.bad) {
            fprintf(stderr, "fm-pingpong: rank %d: %ld messages failed the check\n", l.me, l.bad);
            status = 1;
        }
        pp_link_fini(&l);
    }
    rc = fm_finalize(ctx);
    if (rc != FM_OK) {
        fprintf(stderr, "fm-pingpong: fm_finalize: %s\n", fm_strerror(rc));
        status = status ? status : 1;
    }
    return status;
}
