/* SPDX-License-Identifier: BSD-3-Clause */
/* fastmsg-bench-pingpong's command line (bench/mpi's fastmsg-bench-mpi-pingpong shares it), the
 * list of sizes and how many iterations each size gets. */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opt_parse.h"
#include "pp_common.h"

/* Below these sizes every size runs the full count; above, the count shrinks with the size
 * so that each size moves about the same number of bytes. */
#define PP_LAT_FULL 8192
#define PP_BW_FULL  4096
#define PP_LAT_MIN  20
#define PP_BW_MIN   4

/* fastmsg-bench-pingpong's; bench/mpi's programs bring their own. */
static const pp_cli fastmsg_cli = {
    .launch = "fastmsg-run -n 2",
    .between = "fastmsg ranks",
    .timeout = "fail when a wait stalls this long",
    .receive = 1,
};

/* bench_getopt's state. */
typedef struct parse {
    pp_opts *o;
    const pp_cli *cli;
} parse;

static void usage(FILE *f, const char *prog, void *st)
{
    const pp_cli *cli = ((parse *)st)->cli;
    fprintf(f,
            "usage: %s %s [options]\n"
            "Latency, bandwidth and message rate between two %s.\n"
            "  --min SIZE          smallest message (default 0); sizes are 0, then min, 2*min,\n"
            "                      4*min, ... up to max\n"
            "  --max SIZE          largest message (default 4M); SIZE takes K, M, G suffixes\n"
            "  -r, --repeats N     timed runs per size, the median is reported (default 5)\n"
            "  -i, --iterations N  round trips per latency run up to 8 KiB (default 10000;\n"
            "                      fewer for larger sizes)\n"
            "  -n, --windows N     windows per bandwidth run up to 4 KiB (default 500; fewer\n"
            "                      for larger sizes)\n"
            "  -w, --window N      messages sent back to back per window (default 64)\n"
            "      --warmup N      untimed iterations before each run (default a tenth, >= 2)\n"
            "      --latency-only  only the ping-pong latency\n"
            "      --bw-only       only bandwidth and message rate\n",
            cli->launch, prog, cli->between);
    if (cli->receive)
        fputs("      --receive       handler reads with fm_receive (default fm_stream_deliver)\n",
              f);
    fprintf(f,
            "      --check         verify every byte received (slow)\n"
            "      --timeout S     %s (default 60)\n"
            "      --csv           comma-separated output for machines\n"
            "  -h, --help          this text\n",
            cli->timeout);
}

enum {
    OPT_MIN = 256,
    OPT_MAX,
    OPT_WARMUP,
    OPT_LAT_ONLY,
    OPT_BW_ONLY,
    OPT_RECEIVE,
    OPT_CHECK,
    OPT_TIMEOUT,
    OPT_CSV
};

static const struct option long_opts[] = {
    {"min", required_argument, NULL, OPT_MIN},
    {"max", required_argument, NULL, OPT_MAX},
    {"repeats", required_argument, NULL, 'r'},
    {"iterations", required_argument, NULL, 'i'},
    {"windows", required_argument, NULL, 'n'},
    {"window", required_argument, NULL, 'w'},
    {"warmup", required_argument, NULL, OPT_WARMUP},
    {"latency-only", no_argument, NULL, OPT_LAT_ONLY},
    {"bw-only", no_argument, NULL, OPT_BW_ONLY},
    {"receive", no_argument, NULL, OPT_RECEIVE},
    {"check", no_argument, NULL, OPT_CHECK},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"csv", no_argument, NULL, OPT_CSV},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* One option into the options; 0, -1 for a bad value, -2 for one this program refuses. */
static int apply(void *st, int c, const char *arg, const char *prog)
{
    pp_opts *o = ((parse *)st)->o;
    long v = 0;
    switch (c) {
    case OPT_MIN:
        return bench_parse_one_size(arg, 0, (size_t)1 << 40, &o->min);
    case OPT_MAX:
        return bench_parse_one_size(arg, 0, (size_t)1 << 40, &o->max);
    case 'r':
        if (bench_parse_long(arg, 1, PP_MAX_REPEAT, &v))
            return -1;
        o->repeats = (int)v;
        return 0;
    case 'i':
        return bench_parse_long(arg, 1, LONG_MAX, &o->lat_iters);
    case 'n':
        return bench_parse_long(arg, 1, LONG_MAX, &o->bw_windows);
    case 'w':
        if (bench_parse_long(arg, 1, 4096, &v))
            return -1;
        o->window = (int)v;
        return 0;
    case OPT_WARMUP:
        return bench_parse_long(arg, 0, LONG_MAX, &o->warmup);
    case OPT_LAT_ONLY:
        o->do_bw = 0;
        return 0;
    case OPT_BW_ONLY:
        o->do_lat = 0;
        return 0;
    case OPT_RECEIVE:
        if (!((parse *)st)->cli->receive) {
            fprintf(stderr, "%s: --receive picks fastmsg's receive path; this program has none\n",
                    prog);
            return -2;
        }
        o->use_receive = 1;
        return 0;
    case OPT_CHECK:
        o->check = 1;
        return 0;
    case OPT_TIMEOUT:
        if (bench_parse_long(arg, 1, LONG_MAX, &v))
            return -1;
        o->timeout_s = (double)v;
        return 0;
    case OPT_CSV:
        o->csv = 1;
        return 0;
    }
    return -1;
}

static const char *check(void *st)
{
    const pp_opts *o = ((parse *)st)->o;
    if (o->min > o->max)
        return "--min is larger than --max";
    if (!o->do_lat && !o->do_bw)
        return "--latency-only and --bw-only exclude each other";
    return NULL;
}

int pp_parse_cli(int argc, char **argv, const pp_cli *cli, pp_opts *o)
{
    *o = (pp_opts){.min = 0,
                   .max = PP_MAX_SIZE,
                   .lat_iters = 10000,
                   .bw_windows = 500,
                   .window = 64,
                   .repeats = 5,
                   .warmup = -1,
                   .do_lat = 1,
                   .do_bw = 1,
                   .timeout_s = 60};
    static const bench_cmdline cl = {"hr:i:n:w:", long_opts, usage, apply, check};
    parse st = {o, cli};
    return bench_getopt(argc, argv, &cl, &st);
}

int pp_parse(int argc, char **argv, pp_opts *o)
{
    return pp_parse_cli(argc, argv, &fastmsg_cli, o);
}

int pp_sizes(const pp_opts *o, size_t *sizes)
{
    int n = 0;
    if (o->min == 0)
        sizes[n++] = 0;
    for (size_t s = o->min ? o->min : 1; s <= o->max && n < PP_MAX_SIZES; s *= 2)
        sizes[n++] = s;
    return n;
}

static long scaled(long full, size_t size, size_t full_up_to, long floor)
{
    if (size <= full_up_to)
        return full;
    long v = (long)((double)full * (double)full_up_to / (double)size);
    return v > floor ? v : (full < floor ? full : floor);
}

long pp_lat_iters(const pp_opts *o, size_t size)
{
    return scaled(o->lat_iters, size, PP_LAT_FULL, PP_LAT_MIN);
}

long pp_bw_windows(const pp_opts *o, size_t size)
{
    return scaled(o->bw_windows, size, PP_BW_FULL, PP_BW_MIN);
}

long pp_warmup(const pp_opts *o, long iters)
{
    if (o->warmup >= 0)
        return o->warmup;
    return iters / 10 > 2 ? iters / 10 : 2;
}
