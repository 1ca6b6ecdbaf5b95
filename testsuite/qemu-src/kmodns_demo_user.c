// SPDX-License-Identifier: GPL-2.0
/* The consumer that imports the namespace, as it must. */
#define KMODNS_DEMO_IMPORT
#include "kmodns_demo_consumer.h"
