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
 * as %XX. The first token is cmd=...
 *
 * client -> launcher
 *   cmd=hello rank=R           first line on a new connection
 *   cmd=put key=K value=V      publish (no reply)
 *   cmd=fence                  collective; the launcher answers every rank, once all have
 *                              fenced, with one "cmd=kv" line per pair put by anyone since
 *                              the previous fence and then "cmd=fence_done". Gets are then
 *                              answered locally: one round trip per fence, not per key.
 *   cmd=abort code=C msg=M     end the job; the launcher names the rank and message
 *   cmd=fini                   clean end; the connection then closes
 * launcher -> client
 *   cmd=kv rank=R key=K value=V
 *   cmd=fence_done
 *   cmd=error msg=M            protocol error; the client fails its current call
 *
 * The launcher sends nothing else: hello and put are not acknowledged. A malformed or too
 * long line, a second hello, a put or fence while fencing, or anything after fini is a
 * protocol error: the launcher replies cmd=error and, once the connection has named its
 * rank, ends the job naming that rank. A rank that says hello and exits 0 without fini ends
 * the job too; one that never connects may exit 0 freely.
 *
 * FM_RUN_LINE_MAX counts the '\n'. It leaves room for the longest kv line, a key of
 * FM_BOOT_KEY_MAX and a value of FM_BOOT_VALUE_MAX characters with every byte escaped. */
#define FM_RUN_LINE_MAX 2048

#endif
