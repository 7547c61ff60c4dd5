#ifndef BREEZE_CSODIUM_SHIM_H
#define BREEZE_CSODIUM_SHIM_H
#include <sodium.h>
#endif
