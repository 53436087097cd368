/* SPDX-License-Identifier: BSD-3-Clause */
/* The lines of run_protocol.h that carry values (put, get, vals) and the records after them:
 * formatting and strict parsing, shared by the run back end (boot_run.c) and fastmsg-run,
 * and fuzzed (tests/fuzz/fuzz_run.c). Pure functions: no I/O, no allocation. */
#ifndef FM_RUN_WIRE_H
#define FM_RUN_WIRE_H

#include <stddef.h>

#include "kvline.h"

/* One cmd=get: the values of key from ranks rank .. rank+count-1. */
struct fm_run_get {
    int rank, count;
    const char *key;
};

/* One value in a cmd=vals payload: len bytes at data, or data NULL where the rank put none. */
struct fm_run_val {
    const char *data;
    size_t len;
};

/* 1 if key is 1 to FM_RUN_KEY_MAX characters of [A-Za-z0-9_.-], else 0. */
int fm_run_key_ok(const char *key);

/* The fields of a cmd=put line (split by fm_kvline_parse): *key and the *bytes that follow.
 * Returns NULL, or why the line is malformed (a constant string). */
const char *fm_run_parse_put(const fm_kvline *l, const char **key, size_t *bytes);

/* The fields of a cmd=get line in a job of size ranks. NULL, or why it is malformed. */
const char *fm_run_parse_get(const fm_kvline *l, int size, struct fm_run_get *g);

/* Check a cmd=vals header against the get it answers: same rank and key,
 * 1 <= *n <= asked->count, *bytes <= FM_RUN_VALS_MAX. NULL, or why it is malformed. */
const char *fm_run_parse_vals(const fm_kvline *l, const struct fm_run_get *asked, int *n,
                              size_t *bytes);

/* "cmd=put key=K bytes=L\n", "cmd=get ...\n", and the header of a reply to g carrying n
 * values in bytes bytes, into buf: the length, or -1 if buf is too small. */
int fm_run_fmt_put(char *buf, size_t len, const char *key, size_t bytes);
int fm_run_fmt_get(char *buf, size_t len, const struct fm_run_get *g);
int fm_run_fmt_vals(char *buf, size_t len, const struct fm_run_get *g, int n, size_t bytes);

/* A value's record header, "LEN\n", or "-\n" for none (v->data NULL), into buf (at least
 * FM_RUN_RECORD_MAX bytes): its length. */
#define FM_RUN_RECORD_MAX 12
int fm_run_fmt_record(char *buf, const struct fm_run_val *v);

/* Split a cmd=vals payload (bytes long) into its n values; vals[i] points into data. NULL,
 * or why the payload is malformed (then vals is partly filled). */
const char *fm_run_split_vals(const char *data, size_t bytes, int n, struct fm_run_val *vals);

#endif
