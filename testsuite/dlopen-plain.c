// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * dlopen-plain.so: a dlopen() straight to the C library's loader, for t-preload to preload ahead
 * of kmodns-preload.so. Its dlopen() cover is then never reached, so a process that looks
 * libkmod up with dlsym() sees only libkmod: what the interposer alone would miss.
 */
#include <dlfcn.h>

__attribute__((visibility("default"))) void *dlopen(const char *file, int mode);

/* dlmopen() is not interposed, and in the base namespace it is what dlopen() does */
void *dlopen(const char *file, int mode)
{
	return dlmopen(LM_ID_BASE, file, mode);
}
