#ifndef RADIO_RELAY_CCRYPT_SHIM_H
#define RADIO_RELAY_CCRYPT_SHIM_H
#include <crypt.h>
#include <stdlib.h>
#include <string.h>

/* crypt_rn with its work area (about 32 KiB) on the heap, wiped after: 0 and the hash of `phrase` with `setting`
   (a stored hash) in `out`, or -1 when libcrypt refuses the setting or the hash does not fit. */
static inline int rr_crypt(const char *phrase, const char *setting, char *out, size_t size) {
    struct crypt_data *data = calloc(1, sizeof *data);
    if (data == NULL) return -1;
    const char *hash = crypt_rn(phrase, setting, data, (int)sizeof *data);
    int ok = hash != NULL && hash[0] != '*' && strlen(hash) < size;
    if (ok) strcpy(out, hash);
    explicit_bzero(data, sizeof *data);
    free(data);
    return ok ? 0 : -1;
}

/* What libcrypt says of a stored hash: CRYPT_SALT_OK, CRYPT_SALT_INVALID, CRYPT_SALT_METHOD_DISABLED,
   CRYPT_SALT_METHOD_LEGACY or CRYPT_SALT_TOO_CHEAP. */
static inline int rr_crypt_checksalt(const char *setting) { return crypt_checksalt(setting); }
static const int rr_crypt_salt_ok = CRYPT_SALT_OK;
static const int rr_crypt_salt_legacy = CRYPT_SALT_METHOD_LEGACY;
static const int rr_crypt_salt_too_cheap = CRYPT_SALT_TOO_CHEAP;
#endif
