/* SPDX-License-Identifier: BSD-3-Clause */
/* Undo libinfinipath's signal handlers. Debian's libfabric links the psm provider's
 * libpsm_infinipath/libinfinipath, whose load-time constructor catches SIGINT, SIGILL, SIGABRT,
 * SIGBUS, SIGSEGV and SIGTERM, prints a backtrace and exits with status 1: a killed or
 * crashing rank then looks like a plain failure (no WIFSIGNALED, no core dump), whatever
 * FI_PROVIDER says. We put back the default action for every signal whose handler still
 * points into that library; handlers the program set itself are left alone. */
#include "ofi_internal.h"

#include "log.h"

#include <dlfcn.h>
#include <signal.h>
#include <string.h>

static int fm_ofi_is_psm_handler(const struct sigaction *sa)
{
    Dl_info where;
    void *fn = (sa->sa_flags & SA_SIGINFO) ? (void *)sa->sa_sigaction : (void *)sa->sa_handler;

    if (sa->sa_handler == SIG_DFL || sa->sa_handler == SIG_IGN)
        return 0;
    if (!dladdr(fn, &where) || !where.dli_fname)
        return 0;
    return strstr(where.dli_fname, "infinipath") != NULL;
}

void fm_ofi_restore_signals(void)
{
    for (int sig = 1; sig < NSIG; sig++) {
        struct sigaction sa;
        if (sigaction(sig, NULL, &sa) != 0 || !fm_ofi_is_psm_handler(&sa))
            continue;
        signal(sig, SIG_DFL);
        fm_log(3, "ofi: signal %d: removed libinfinipath's handler", sig);
    }
}

/* At load, before main can install handlers of its own, so that every program linking the
 * library (the launcher too) dies by its signals as usual. */
__attribute__((constructor)) static void fm_ofi_signals_at_load(void)
{
    fm_ofi_restore_signals();
}
