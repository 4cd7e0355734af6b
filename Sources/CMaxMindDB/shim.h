#ifndef RADIO_RELAY_CMAXMINDDB_SHIM_H
#define RADIO_RELAY_CMAXMINDDB_SHIM_H
#include <maxminddb.h>
#include <sys/socket.h>

/* The ISO 3166-1 country code (`country` → `iso_code`) of `address` in `mmdb`, into `code` (two letters and a NUL);
   0 when found, -1 otherwise. MMDB_aget_value is called here rather than from Swift because its result is a C union
   with a 128-bit member; the path array is this file's own. */
static inline int radio_relay_mmdb_country(const MMDB_s *mmdb, const struct sockaddr *address, char code[3]) {
    int error = MMDB_SUCCESS;
    MMDB_lookup_result_s result = MMDB_lookup_sockaddr(mmdb, address, &error);
    if (error != MMDB_SUCCESS || !result.found_entry) return -1;
    MMDB_entry_data_s data;
    const char *const path[] = {"country", "iso_code", NULL};
    if (MMDB_aget_value(&result.entry, &data, path) != MMDB_SUCCESS) return -1;
    if (!data.has_data || data.type != MMDB_DATA_TYPE_UTF8_STRING || data.data_size != 2) return -1;
    code[0] = data.utf8_string[0];
    code[1] = data.utf8_string[1];
    code[2] = 0;
    return 0;
}
#endif
