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
static inline CURLcode rr_curl_getinfo_long(CURL *h, CURLINFO i, long *v) { return curl_easy_getinfo(h, i, v); }
#endif
