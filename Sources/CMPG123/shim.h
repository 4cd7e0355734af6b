#ifndef RADIO_RELAY_CMPG123_SHIM_H
#define RADIO_RELAY_CMPG123_SHIM_H
#include <stddef.h>
#include <sys/types.h>
#include <mpg123.h>

/* mpg123.h renames several functions with macros (large-file and API-version suffixes) that Swift cannot see
   through; these wrappers pin the names. */
static inline int rr_mpg123_decode_frame(mpg123_handle *h, off_t *num, unsigned char **audio, size_t *bytes) {
    return mpg123_decode_frame(h, num, audio, bytes);
}
static inline int rr_mpg123_param(mpg123_handle *h, enum mpg123_parms key, long value) {
    return mpg123_param(h, key, value, 0.0);
}
#endif
