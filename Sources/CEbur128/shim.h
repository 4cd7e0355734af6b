#ifndef RADIO_RELAY_CEBUR128_SHIM_H
#define RADIO_RELAY_CEBUR128_SHIM_H
#include <ebur128.h>
#endif
