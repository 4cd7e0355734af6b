#ifndef RADIO_RELAY_CCURL_SHIM_H
#define RADIO_RELAY_CCURL_SHIM_H
#include <curl/curl.h>

/* curl_easy_setopt / curl_multi_setopt / curl_easy_getinfo are variadic: Swift cannot call them, so each kind of
   argument gets one typed wrapper. */
static inline CURLcode rr_curl_setopt_long(CURL *h, CURLoption o, long v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode rr_curl_setopt_string(CURL *h, CURLoption o, const char *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode rr_curl_setopt_pointer(CURL *h, CURLoption o, void *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode rr_curl_setopt_slist(CURL *h, CURLoption o, struct curl_slist *v) {
    return curl_easy_setopt(h, o, v);
}
typedef size_t (*rr_curl_data_callback)(char *, size_t, size_t, void *);
static inline CURLcode rr_curl_setopt_callback(CURL *h, CURLoption o, rr_curl_data_callback v) {
    return curl_easy_setopt(h, o, v);
}
/* Uploads (a push to Icecast): what a read callback returns to pause the transfer, how it is resumed, and the one
   authentication a source client uses. The macros are casts or expressions Swift does not import. */
static const size_t rr_curl_readfunc_pause = CURL_READFUNC_PAUSE;
static const long rr_curlauth_basic = (long)CURLAUTH_BASIC;
static inline CURLcode rr_curl_resume(CURL *h) { return curl_easy_pause(h, CURLPAUSE_CONT); }
typedef int (*rr_curl_sockopt_callback)(void *, curl_socket_t, curlsocktype);
static inline CURLcode rr_curl_setopt_sockopt(CURL *h, rr_curl_sockopt_callback v) {
    return curl_easy_setopt(h, CURLOPT_SOCKOPTFUNCTION, v);
}
static inline CURLcode rr_curl_getinfo_long(CURL *h, CURLINFO i, long *v) { return curl_easy_getinfo(h, i, v); }
#endif
