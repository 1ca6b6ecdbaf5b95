// SPDX-License-Identifier: GPL-2.0
/* The consumer that forgot the import: the kernel refuses it with EINVAL. */
#include "kmodns_demo_consumer.h"
