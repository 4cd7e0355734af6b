#ifndef RADIO_RELAY_CSOXR_SHIM_H
#define RADIO_RELAY_CSOXR_SHIM_H
#include <soxr.h>
#endif
