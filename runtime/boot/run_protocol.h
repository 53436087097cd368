/* SPDX-License-Identifier: BSD-3-Clause */
/* The wire protocol between fastmsg-run and the "run" bootstrap back end.
 *
 * fastmsg-run listens on TCP and starts rank r with these environment variables: */
#ifndef FM_RUN_PROTOCOL_H
#define FM_RUN_PROTOCOL_H

#define FM_RUN_ENV_ADDR   "FASTMSG_RUN_ADDR"   /* "host:port" of the launcher's listener */
#define FM_RUN_ENV_RANK   "FASTMSG_RUN_RANK"   /* this process's rank, decimal */
#define FM_RUN_ENV_SIZE   "FASTMSG_RUN_SIZE"   /* number of ranks, decimal */
#define FM_RUN_ENV_JOBKEY "FASTMSG_RUN_JOBKEY" /* the job key, 16 hex digits */

/* Messages are lines of space-separated key=value tokens ending in '\n', at most
 * FM_RUN_LINE_MAX bytes, parsed by kvline.h; values escape space, '%', '=' and control bytes
 * as %XX. The first token is cmd=... Values put and got are bytes, not text: they follow the
 * line that announces them, as they are (no escaping, no hex), so a value costs its own
 * length on the wire.
 *
 * client -> launcher
 *   cmd=hello rank=R version=V first line on a new connection; V must be FM_RUN_VERSION
 *   cmd=put key=K bytes=L      followed by the L bytes of the value (L <= FM_RUN_VALUE_MAX);
 *                              no reply; gets see it once the next fence is done
 *   cmd=fence                  collective: once every rank has fenced, the launcher makes
 *                              every value put since the previous fence visible and answers
 *                              each rank "cmd=fence_done". Nothing else: values travel only
 *                              when asked for.
 *   cmd=get rank=R key=K count=C
 *                              the values of K from ranks R .. R+C-1 (C >= 1, R+C <= size),
 *                              as of the last fence done; answered with one cmd=vals
 *   cmd=abort code=C msg=M     end the job; the launcher names the rank and message
 *   cmd=fini                   clean end; the connection then closes
 * launcher -> client
 *   cmd=fence_done
 *   cmd=vals rank=R key=K count=N bytes=L
 *                              followed by L bytes: N records, one per rank from R on, each
 *                              "LEN\n" and that rank's LEN bytes, or "-\n" when it put
 *                              nothing under K. N <= C: the launcher answers fewer ranks than
 *                              asked (at least one) to keep L <= FM_RUN_VALS_MAX.
 *   cmd=error msg=M            protocol error; the client fails its current call
 *
 * The launcher sends nothing else: hello and put are not acknowledged. A malformed or too
 * long line, a hello of another version or a second one, a put, get or fence while fencing,
 * a get for ranks outside the job, more than FM_RUN_PUT_BYTES_MAX put by one rank, or
 * anything after fini is a protocol error: the launcher replies cmd=error and, once the
 * connection has named its rank, ends the job naming that rank. A rank that says hello and
 * exits 0 without fini ends the job too; one that never connects may exit 0 freely.
 *
 * FM_RUN_LINE_MAX counts the '\n'. */
#define FM_RUN_VERSION       2
#define FM_RUN_LINE_MAX      2048
#define FM_RUN_KEY_MAX       64                /* characters of a key: [A-Za-z0-9_.-] */
#define FM_RUN_VALUE_MAX     (64 * 1024)       /* bytes of one value */
#define FM_RUN_VALS_MAX      (256 * 1024)      /* bytes after one cmd=vals */
#define FM_RUN_PUT_BYTES_MAX (4 * 1024 * 1024) /* key and value bytes one rank may put */

#endif
