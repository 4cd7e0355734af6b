#ifndef RADIO_RELAY_CZLIB_SHIM_H
#define RADIO_RELAY_CZLIB_SHIM_H
#include <zlib.h>

/* inflateInit2 and deflateInit2 are macros (they pass ZLIB_VERSION and sizeof(z_stream) to the real functions):
   Swift cannot call them, so each use gets a typed wrapper. 15 + 16: the largest window, gzip framing only (a
   report reads gzip files, told apart by their magic bytes; zlib's own framing is not an access log's). */
static inline int rr_inflate_init_gzip(z_stream *stream) { return inflateInit2(stream, 15 + 16); }
static inline int rr_deflate_init_gzip(z_stream *stream, int level) {
    return deflateInit2(stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
}
#endif
