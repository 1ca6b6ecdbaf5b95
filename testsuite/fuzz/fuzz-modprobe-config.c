// SPDX-License-Identifier: GPL-2.0-or-later
/* A modprobe.d file as modprobe reads it itself (weakdep, for -c); libkmod reads the rest. */
#include "fuzz-util.h"
#include "modprobe-config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	weakdeps_print(fuzz_devnull(), fuzz_file(data, size));
	return 0;
}
