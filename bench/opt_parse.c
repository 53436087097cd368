/* SPDX-License-Identifier: BSD-3-Clause */
/* Command-line reading shared by the benchmarks (opt_parse.h). */
#include "opt_parse.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int bench_getopt(int argc, char **argv, const bench_cmdline *cl, void *st)
{
    const char *prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
    int c;
    while ((c = getopt_long(argc, argv, cl->shortopts, cl->longopts, NULL)) != -1) {
        if (c == 'h') {
            cl->usage(stdout, prog, st);
            return 1;
        }
        /* '?': getopt_long has already named the option. */
        int rc = c == '?' ? -2 : cl->apply(st, c, optarg, prog);
        if (rc) {
            if (rc == -1)
                fprintf(stderr, "%s: bad value '%s' for an option\n", prog, optarg);
            cl->usage(stderr, prog, st);
            return -1;
        }
    }
    const char *why = optind < argc ? "unexpected argument" : cl->check(st);
    if (why) {
        fprintf(stderr, "%s: %s\n", prog, why);
        cl->usage(stderr, prog, st);
        return -1;
    }
    return 0;
}

int bench_parse_size(const char *s, char **endp, size_t lo, size_t hi, size_t *out)
{
    errno = 0;
    unsigned long long v = strtoull(s, endp, 10);
    if (errno || *endp == s || *s == '-')
        return -1;
    int shift = 0;
    if (**endp == 'K' || **endp == 'k')
        shift = 10;
    else if (**endp == 'M' || **endp == 'm')
        shift = 20;
    else if (**endp == 'G' || **endp == 'g')
        shift = 30;
    if (shift)
        (*endp)++;
    if (v > (unsigned long long)hi >> shift || (size_t)(v << shift) < lo)
        return -1;
    *out = (size_t)(v << shift);
    return 0;
}

int bench_parse_one_size(const char *s, size_t lo, size_t hi, size_t *out)
{
    char *end;
    return bench_parse_size(s, &end, lo, hi, out) || *end ? -1 : 0;
}

int bench_parse_long(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}
