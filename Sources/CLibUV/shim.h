#ifndef BREEZE_CLIBUV_SHIM_H
#define BREEZE_CLIBUV_SHIM_H
#include <uv.h>
#endif
