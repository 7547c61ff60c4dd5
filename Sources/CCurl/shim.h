#ifndef BREEZE_CCURL_SHIM_H
#define BREEZE_CCURL_SHIM_H
#include <curl/curl.h>

/// `curl_easy_setopt` and `curl_easy_getinfo` are variadic: Swift cannot call them, so each option Breeze sets
/// has a typed wrapper here.
static inline CURLcode breeze_curl_set_string(CURL *c, CURLoption o, const char *v) { return curl_easy_setopt(c, o, v); }
static inline CURLcode breeze_curl_set_long(CURL *c, CURLoption o, long v) { return curl_easy_setopt(c, o, v); }
static inline CURLcode breeze_curl_set_pointer(CURL *c, CURLoption o, void *v) { return curl_easy_setopt(c, o, v); }
static inline CURLcode breeze_curl_set_slist(CURL *c, CURLoption o, struct curl_slist *v) { return curl_easy_setopt(c, o, v); }
typedef size_t (*breeze_curl_callback)(char *, size_t, size_t, void *);
static inline CURLcode breeze_curl_set_callback(CURL *c, CURLoption o, breeze_curl_callback f) { return curl_easy_setopt(c, o, f); }
typedef int (*breeze_curl_xferinfo)(void *, curl_off_t, curl_off_t, curl_off_t, curl_off_t);
static inline CURLcode breeze_curl_set_xferinfo(CURL *c, breeze_curl_xferinfo f) { return curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, f); }
static inline long breeze_curl_response_code(CURL *c) { long v = 0; curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &v); return v; }
#endif
