// SPDX-License-Identifier: LGPL-2.1-or-later
/* A modules.*.bin index: exact-key lookups, and the namespace records of modules.dep.bin. */
#include "fuzz-util.h"
#include "libkmodns-index.h"
#include "libkmodns-private.h"

/* Keys of the seeds (the sample tree's indexes) and of a real tree; the fuzzer finds others
 * through the comparisons the lookup makes. */
static const char *const keys[] = {
	"", "sample_core", "sample_user", "sample_bad", "usb_storage", "ums_alauda", "snd",
	"symbol:sample_core_register", "pci:v00008086d00001234sv*sd*bc*sc*i*", "a", "zz",
};

static int take_value(void *data, const char *value, unsigned priority)
{
	*(size_t *)data += fuzz_touch(value) + priority;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kmodns_index *idx;
	size_t i, sum = 0;

	if (kmodns_index_open(fuzz_file(data, size), &idx) < 0)
		return 0;
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		struct kmodns_ns_record *rec;

		kmodns_index_lookup(idx, keys[i], take_value, &sum);
		if (kmodns_ns_record_lookup_in(fuzz_ctx(), idx, "fuzz", keys[i], &rec) == 0) {
			fuzz_walk_record(rec);
			kmodns_ns_record_unref(rec);
		}
	}
	kmodns_index_close(idx);
	return 0;
}
