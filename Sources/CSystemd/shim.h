#ifndef RADIO_RELAY_CSYSTEMD_SHIM_H
#define RADIO_RELAY_CSYSTEMD_SHIM_H
#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>

/* sd_journal_print is variadic: log one preformatted message. */
static inline int rr_journal_print(int priority, const char *message) {
    return sd_journal_print(priority, "%s", message);
}
#endif
