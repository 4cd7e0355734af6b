#ifndef RADIO_RELAY_COGG_SHIM_H
#define RADIO_RELAY_COGG_SHIM_H
#include <ogg/ogg.h>
#endif
