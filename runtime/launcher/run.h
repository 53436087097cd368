/* SPDX-License-Identifier: BSD-3-Clause */
/* fastmsg-run: the state every part of the launcher shares.
 *
 * One libev loop drives everything: the listener and one connection per rank (exchange.c over
 * conn.c), one child watcher per rank (job.c), the labelled output pipes (label.c), the tty
 * stdin relay (relay.c) and the signals and timers that end a job (job.c). */
#ifndef FM_RUN_H
#define FM_RUN_H

#include <ev.h>
#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

#include "run_protocol.h"
#include "run_wire.h"

#define FM_RUN_MAX_RANKS  4096
#define FM_RUN_KILL_AFTER 1.0 /* seconds from SIGTERM to SIGKILL when ending a job */
#define FM_RUN_GIVE_UP    3.0 /* seconds from ending a job to exiting regardless */
#define FM_RUN_GRACE      2.0 /* seconds a rank's exit and its connection may be apart */
/* Seconds a failed exit waits before it is blamed: when a rank is killed, the others fail at
 * once (their waits see it die), and the report should name the killed rank. */
#define FM_RUN_BLAME_WAIT 0.2
/* Bytes queued for one rank above which the launcher reads no more of its requests until
 * they drain: a rank that asks without reading cannot make the launcher hold without bound.
 * A rank that waits for each reply never has more than one queued. */
#define FM_RUN_OUT_MAX (4 * FM_RUN_VALS_MAX)

#define FM_RUN_XSTR(x) #x
#define FM_RUN_STR(x)  FM_RUN_XSTR(x)

struct fm_run_opts {
    int n;
    char **agent; /* --agent split on spaces, NULL-ended; NULL without --agent */
    char **hosts; /* --hosts split on commas, NULL-ended */
    int nhosts;
    const char *addr; /* --addr, or NULL */
    int label, verbose;
    char **prog; /* program and arguments, NULL-ended */
};

/* Parse the command line. Returns -1 to go on, or the exit status once --help (0) or an
 * error (2) has been printed. */
int fm_run_args_parse(int argc, char **argv, struct fm_run_opts *o);

struct fm_run_job;
struct fm_run_label;

/* A reference-counted chunk of output shared by many connections (a reply to a get). */
struct fm_run_blob {
    size_t refs, len;
    char data[];
};

struct fm_run_out {
    struct fm_run_out *next;
    struct fm_run_blob *blob;
    size_t off;
};

/* What a connection hands its input to (the protocol, exchange.c): set at fm_run_conn_new, so
 * conn.c moves bytes and calls nothing above it. */
struct fm_run_conn;
struct fm_run_conn_ops {
    /* One complete line; returns how many bytes follow it as its payload (0: none). */
    size_t (*line)(struct fm_run_conn *c, char *line);
    /* Those bytes, once all have come (valid during the call). */
    void (*payload)(struct fm_run_conn *c, const char *data, size_t len);
    void (*error)(struct fm_run_conn *c, const char *reason); /* input it cannot take */
    void (*closed)(struct fm_run_conn *c);                    /* the peer has closed */
    void (*fail)(struct fm_run_conn *c, const char *why);     /* the launcher cannot go on */
};

struct fm_run_conn {
    struct fm_run_job *job;
    const struct fm_run_conn_ops *ops;
    int fd;
    int rank;     /* -1 until cmd=hello */
    int draining; /* after a protocol error: input is discarded until the peer closes */
    int held;     /* FM_RUN_OUT_MAX queued: its input waits (the read watcher is stopped) */
    ev_io rw, ww;
    struct fm_run_out *head, *tail;
    size_t queued; /* bytes in head..tail not yet written */
    size_t len;    /* bytes held in in[] */
    char in[FM_RUN_LINE_MAX];
    char *raw; /* a payload being collected: raw_have of raw_len bytes; NULL between them */
    size_t raw_len, raw_have;
    /* exchange.c's: the key of the cmd=put whose value is being collected */
    char put_key[FM_RUN_KEY_MAX + 1];
    size_t put_bytes;
};

struct fm_run_rank {
    struct fm_run_job *job;
    int index;
    pid_t pid;                /* 0 if never started */
    int reaped, status;       /* wait status once reaped */
    int signalled;            /* in the set the job's end signals */
    int hello, fini, fenced;  /* protocol progress */
    int lost;                 /* connection closed without cmd=fini */
    int grace_over;           /* FM_RUN_GRACE passed since exit or loss */
    int settled;              /* ended normally */
    struct fm_run_conn *conn; /* after cmd=hello, until closed */
    struct fm_run_label *out, *err;
    ev_child child;
    ev_timer grace;
};

struct fm_run_buf {
    char *data;
    size_t len, cap;
};

struct fm_run_job {
    struct ev_loop *loop;
    const struct fm_run_opts *opts;
    char addr[320]; /* advertised host:port */
    char key[17];   /* job key, 16 hex digits */
    int listen_fd;
    ev_io listen_w;
    ev_timer listen_pause;
    struct fm_run_rank *rank; /* opts->n of them */
    int nstarted, nreaped, nsettled, nfenced;
    struct fm_run_store *kv; /* what the ranks put (store.c) */
    int ending, exit_code;
    ev_timer kill_timer, give_up_timer;
    ev_timer blame_timer; /* FM_RUN_BLAME_WAIT after the first non-zero exit */
    int blame_rank;       /* that rank, -1 before */
    /* A rank has settled (exited or lost): main.c points it at the exchange's fence check,
     * so job.c need not call the protocol above it. */
    void (*on_settle)(struct fm_run_job *job);
    ev_signal sig[3];
    int stdin_fd; /* rank 0's stdin when relayed, else -1 */
    struct sigaction orig_pipe;
    struct sigaction orig_sig[3]; /* SIGINT, SIGTERM, SIGHUP before libev took them */
};

/* job.c: a rank's life and the job's end */
int fm_run_job_init(struct fm_run_job *job, const struct fm_run_opts *o);
void fm_run_job_signals(struct fm_run_job *job);
/* In a new child, with every signal blocked: give back the actions the launcher changed. */
void fm_run_job_child_signals(const struct fm_run_job *job);
void fm_run_job_watch(struct fm_run_job *job, int r);
/* Look at rank r again after something changed (exit, fini, lost connection). */
void fm_run_job_review(struct fm_run_job *job, int r);
/* Print "fastmsg-run: <what>; ending the job" once, then end it with status code. */
void fm_run_job_fail(struct fm_run_job *job, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void fm_run_job_finish(struct fm_run_job *job) __attribute__((noreturn));

/* shm_clean.c: remove the job's regions left in /dev/shm (the ranks are gone). */
void fm_run_shm_clean(const struct fm_run_job *job);

/* listen.c */
int fm_run_listen(struct fm_run_job *job);

/* spawn.c, env.c */
int fm_run_spawn_all(struct fm_run_job *job);
/* The environment of rank r: ours minus other launchers' variables, plus the FASTMSG_RUN_*
 * assignments in ours[] unless they travel on an agent's command line. */
struct fm_run_env {
    char **env;    /* NULL-ended; entries borrowed from environ or ours[] */
    char *ours[4]; /* NAME=value for ADDR, RANK, SIZE, JOBKEY */
};
int fm_run_env_build(const struct fm_run_job *job, int r, struct fm_run_env *e);
void fm_run_env_free(struct fm_run_env *e);

/* conn.c */
/* A blob of len bytes copied from data, or left for the caller to fill if data is NULL. */
struct fm_run_blob *fm_run_blob_new(const char *data, size_t len);
void fm_run_blob_unref(struct fm_run_blob *b);
struct fm_run_conn *fm_run_conn_new(struct fm_run_job *job, int fd,
                                    const struct fm_run_conn_ops *ops);
void fm_run_conn_send(struct fm_run_conn *c, struct fm_run_blob *b); /* takes one reference */
void fm_run_conn_send_text(struct fm_run_conn *c, const char *text);
/* Read everything the peer has sent so far (its process has ended). */
void fm_run_conn_drain(struct fm_run_conn *c);

/* store.c: the values put, committed at each fence; the replies to gets */
struct fm_run_store;
struct fm_run_store_stats {
    unsigned long long puts, fences, gets, values, bytes; /* values and bytes sent in replies */
};
struct fm_run_store *fm_run_store_new(int nranks);
void fm_run_store_free(struct fm_run_store *s);
/* Rank's put of len bytes under key, visible after the next commit. 0, -1 when out of
 * memory, -2 when the rank would exceed FM_RUN_PUT_BYTES_MAX. */
int fm_run_store_put(struct fm_run_store *s, int rank, const char *key, const char *val,
                     size_t len);
/* A fence is done: every put since the last commit becomes what gets see. */
void fm_run_store_commit(struct fm_run_store *s);
/* The cmd=vals reply to g (a reference for the caller), or NULL when out of memory. */
struct fm_run_blob *fm_run_store_reply(struct fm_run_store *s, const struct fm_run_get *g);
const struct fm_run_store_stats *fm_run_store_stats(const struct fm_run_store *s);

/* exchange.c: the protocol itself, behind the connections' ops */
extern const struct fm_run_conn_ops fm_run_exchange_ops;
size_t fm_run_exchange_line(struct fm_run_conn *c, char *line);
/* Reply cmd=error, ignore the connection from now on, and fail the job if it named a rank. */
void fm_run_exchange_error(struct fm_run_conn *c, const char *reason);
void fm_run_exchange_closed(struct fm_run_conn *c);
/* End the job if a fence is waiting for a rank that has left. */
void fm_run_exchange_check_fence(struct fm_run_job *job);

/* label.c */
struct fm_run_label *fm_run_label_new(struct fm_run_job *job, int rank, int fd, int to);
/* Read what is left, print it, close. For the job's end. */
void fm_run_label_drain(struct fm_run_label *l);

/* relay.c: rank 0's stdin when ours is a terminal (a background process group may not read
 * it). Returns the read end for rank 0, or -1 to let rank 0 inherit stdin. */
int fm_run_relay_start(struct fm_run_job *job);

/* util.c */
int fm_run_write_all(int fd, const char *data, size_t len);
int fm_run_buf_append(struct fm_run_buf *b, const char *data, size_t len);
void fm_run_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* For FM_CHECK_QUIET: print "fastmsg-run: ..." and return code. */
int fm_run_fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
