/* SPDX-License-Identifier: GPL-2.0 */
/* The namespace of the demo pair, in the form of the kernel it is built for. */
#include <linux/module.h>
#include <linux/version.h>

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 13, 0)
#define KMODNS_DEMO_NS "KMODNS_DEMO"
#else
#define KMODNS_DEMO_NS KMODNS_DEMO
#endif

int kmodns_demo_answer(void);
