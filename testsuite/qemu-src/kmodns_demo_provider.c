// SPDX-License-Identifier: GPL-2.0
/* Exports one function into the namespace KMODNS_DEMO. */
#include "kmodns_demo.h"

int kmodns_demo_answer(void)
{
	return 42;
}
EXPORT_SYMBOL_NS_GPL(kmodns_demo_answer, KMODNS_DEMO_NS);

MODULE_DESCRIPTION("kmodns test: a provider of the KMODNS_DEMO namespace");
MODULE_LICENSE("GPL");
