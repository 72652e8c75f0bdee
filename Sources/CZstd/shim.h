#ifndef DUMPKIT_CZSTD_SHIM_H
#define DUMPKIT_CZSTD_SHIM_H

#include <zstd.h>

#endif
