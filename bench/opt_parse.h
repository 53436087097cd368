/* Number parsing shared by the benchmarks' command lines (pp_opts.c, mc_opts.c). */
#ifndef BENCH_OPT_PARSE_H
#define BENCH_OPT_PARSE_H

#include <stddef.h>

/* A decimal size with an optional K, M or G (binary) suffix, in [lo, hi] bytes; *endp is
 * left after it. 0, or -1 when it is not a size or out of range. */
int bench_parse_size(const char *s, char **endp, size_t lo, size_t hi, size_t *out);
/* The same for a whole argument (nothing may follow). */
int bench_parse_one_size(const char *s, size_t lo, size_t hi, size_t *out);
/* A whole decimal argument in [lo, hi]. */
int bench_parse_long(const char *s, long lo, long hi, long *out);

#endif
