#ifndef RADIO_RELAY_CSYSTEMD_SHIM_H
#define RADIO_RELAY_CSYSTEMD_SHIM_H
#include <systemd/sd-daemon.h>
#endif
