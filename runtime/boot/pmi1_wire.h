/* SPDX-License-Identifier: BSD-3-Clause */
/* The PMI-1 wire protocol (simple PMI v1.1, as spoken by MPICH hydra and Slurm's pmi2 plugin)
 * as pure functions: request formatters, response parsers and a line assembler. No I/O, so
 * every piece is unit-tested without a launcher.
 *
 * Formatters write one '\n'-ended request into buf (capacity len) and return its length, or
 * FM_ERR_TOO_LONG if it does not fit in buf or in FM_PMI1_LINE_MAX, or FM_ERR_INVALID for a
 * token that the protocol cannot carry (empty, or holding a space, '=' or control byte).
 *
 * Parsers take one response line (modified in place), check that its cmd= is the expected one
 * and that rc= is 0, and return FM_OK or FM_ERR_BOOTSTRAP (FM_ERR_TOO_LONG when a value does
 * not fit the caller's buffer) with a one-line reason in err (capacity errlen). */
#ifndef FM_PMI1_WIRE_H
#define FM_PMI1_WIRE_H

#include <stddef.h>

#define FM_PMI1_LINE_MAX 1024 /* bytes of one line with its '\n': Slurm's limit */

struct fm_pmi1_maxes {
    int kvsname_max, keylen_max, vallen_max;
};

int fm_pmi1_fmt_init(char *buf, size_t len);
int fm_pmi1_fmt_get_maxes(char *buf, size_t len);
int fm_pmi1_fmt_get_my_kvsname(char *buf, size_t len);
int fm_pmi1_fmt_put(char *buf, size_t len, const char *kvsname, const char *key, const char *value);
int fm_pmi1_fmt_get(char *buf, size_t len, const char *kvsname, const char *key);
int fm_pmi1_fmt_barrier_in(char *buf, size_t len);
int fm_pmi1_fmt_abort(char *buf, size_t len, int exitcode);
int fm_pmi1_fmt_finalize(char *buf, size_t len);
/* PMI_PORT mode: the first line on a fresh connection. */
int fm_pmi1_fmt_initack(char *buf, size_t len, int pmiid);

int fm_pmi1_parse_response_to_init(char *line, char *err, size_t errlen);
int fm_pmi1_parse_maxes(char *line, struct fm_pmi1_maxes *m, char *err, size_t errlen);
int fm_pmi1_parse_my_kvsname(char *line, char *kvsname, size_t len, char *err, size_t errlen);
int fm_pmi1_parse_put_result(char *line, char *err, size_t errlen);
int fm_pmi1_parse_get_result(char *line, char *value, size_t len, char *err, size_t errlen);
int fm_pmi1_parse_barrier_out(char *line, char *err, size_t errlen);
int fm_pmi1_parse_finalize_ack(char *line, char *err, size_t errlen);
/* PMI_PORT handshake reply: "cmd=initack", then "cmd=set size=N", "cmd=set rank=R" and
 * "cmd=set debug=D", one line each, in that order. */
int fm_pmi1_parse_initack(char *line, char *err, size_t errlen);
/* One "cmd=set <name>=<int>" line; the integer must be >= 0. */
int fm_pmi1_parse_set(char *line, const char *name, int *value, char *err, size_t errlen);

/* Reassembles the lines of a byte stream. Feed it what read() returned; take lines out. */
typedef struct fm_pmi1_lines {
    char buf[FM_PMI1_LINE_MAX + 1];
    size_t len;   /* bytes held */
    size_t taken; /* bytes of the line handed out last, dropped on the next call */
    int error;    /* sticky: the stream broke the protocol */
} fm_pmi1_lines;

void fm_pmi1_lines_init(fm_pmi1_lines *a);
/* Bytes that fm_pmi1_lines_feed can take now (read at most this many). */
size_t fm_pmi1_lines_space(const fm_pmi1_lines *a);
/* Append n bytes; returns how many were taken (all of them when n <= space). */
size_t fm_pmi1_lines_feed(fm_pmi1_lines *a, const char *data, size_t n);
/* Next complete line, without its '\n', in *line (valid until the next call). Returns 1 with
 * a line, 0 if more bytes are needed, FM_ERR_TOO_LONG for a line over FM_PMI1_LINE_MAX bytes
 * or FM_ERR_BOOTSTRAP for a NUL byte in a line; after an error the stream is unusable. */
int fm_pmi1_lines_next(fm_pmi1_lines *a, char **line);

#endif
