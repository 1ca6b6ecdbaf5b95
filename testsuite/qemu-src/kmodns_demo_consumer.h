/* SPDX-License-Identifier: GPL-2.0 */
/* A user of kmodns_demo_answer(); it imports KMODNS_DEMO only when KMODNS_DEMO_IMPORT is set. */
#include "kmodns_demo.h"

static int __init kmodns_demo_consumer_init(void)
{
	return kmodns_demo_answer() == 42 ? 0 : -EINVAL;
}
module_init(kmodns_demo_consumer_init);

static void __exit kmodns_demo_consumer_exit(void)
{
}
module_exit(kmodns_demo_consumer_exit);

#ifdef KMODNS_DEMO_IMPORT
MODULE_IMPORT_NS(KMODNS_DEMO_NS);
#endif
MODULE_DESCRIPTION("kmodns test: a consumer of the KMODNS_DEMO namespace");
MODULE_LICENSE("GPL");
