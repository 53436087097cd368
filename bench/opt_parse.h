/* SPDX-License-Identifier: BSD-3-Clause */
/* Command-line reading shared by the benchmarks (pp_opts.c, mc_opts.c): the getopt loop and
 * number parsing. */
#ifndef BENCH_OPT_PARSE_H
#define BENCH_OPT_PARSE_H

#include <getopt.h>
#include <stddef.h>
#include <stdio.h>

/* One program's command line, for bench_getopt; st is the program's own parsing state. */
typedef struct bench_cmdline {
    const char *shortopts;
    const struct option *longopts;
    /* The usage text on f. */
    void (*usage)(FILE *f, const char *prog, void *st);
    /* One option other than -h into st: 0; -1 for a bad value (bench_getopt says so), or -2
     * after printing its own reason (an option this program refuses). */
    int (*apply)(void *st, int c, const char *arg, const char *prog);
    /* After the last option: NULL, or why the options do not go together. */
    const char *(*check)(void *st);
} bench_cmdline;

/* Reads argv. 0; 1 after printing usage (-h); -1 after printing an error and usage. */
int bench_getopt(int argc, char **argv, const bench_cmdline *cl, void *st);

/* A decimal size with an optional K, M or G (binary) suffix, in [lo, hi] bytes; *endp is
 * left after it. 0, or -1 when it is not a size or out of range. */
int bench_parse_size(const char *s, char **endp, size_t lo, size_t hi, size_t *out);
/* The same for a whole argument (nothing may follow). */
int bench_parse_one_size(const char *s, size_t lo, size_t hi, size_t *out);
/* A whole decimal argument in [lo, hi]. */
int bench_parse_long(const char *s, long lo, long hi, long *out);

#endif
