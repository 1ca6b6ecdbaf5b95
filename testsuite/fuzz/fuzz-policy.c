// SPDX-License-Identifier: LGPL-2.1-or-later
/* A policy file (kmodns.d) as modprobe reads it, and the verdicts it gives a few modules. */
#include "fuzz-util.h"
#include "libkmodns-private.h"

/* What the rules are asked about: names, directories and traits of both kinds. */
static struct policy_subject subjects[] = {
	{ "usb_storage", "/lib/modules/6.12.0/kernel/drivers/usb/storage/usb-storage.ko", "/lib/modules/6.12.0", 3, NULL, NULL },
	{ "ums_alauda", "/lib/modules/6.12.0/updates/dkms/ums-alauda.ko.xz", "/lib/modules/6.12.0", 0, NULL, NULL },
	{ "crypto_x", NULL, "/lib/modules/6.12.0", 1, NULL, NULL },
};
static const char *const namespaces[] = { "USB_STORAGE", "CRYPTO_INTERNAL", "module:ums_*,usb_storage", "" };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_file(data, size);
	struct kmodns_policy *policy;
	struct policy_match m;
	size_t i, j;

	if (kmodns_policy_new_from_files(fuzz_ctx(), &path, 1, &policy) < 0)
		return 0;
	kmodns_policy_get_error_count(policy);
	fuzz_touch(kmodns_policy_action_to_string(kmodns_policy_get_missing_import(policy)));
	for (i = 0; i < kmodns_policy_get_file_count(policy); i++)
		fuzz_touch(kmodns_policy_get_file(policy, i));
	for (i = 0; i < kmodns_policy_get_rule_count(policy); i++) {
		fuzz_touch(kmodns_policy_rule_get_namespace(policy, i));
		fuzz_touch(kmodns_policy_rule_get_text(policy, i));
		fuzz_touch(kmodns_policy_rule_get_file(policy, i));
		kmodns_policy_rule_get_line(policy, i);
		for (j = 0; j < kmodns_policy_rule_get_module_count(policy, i); j++)
			fuzz_touch(kmodns_policy_rule_get_module(policy, i, j));
	}
	for (i = 0; i < ARRAY_SIZE(subjects); i++)
		for (j = 0; j < ARRAY_SIZE(namespaces); j++)
			if (kmodns_policy_match(policy, &subjects[i], namespaces[j], &m) > 0)
				fuzz_touch(m.rule);
	if (kmodns_policy_missing_import(policy, "USB_STORAGE", &m))
		fuzz_touch(m.rule);
	kmodns_policy_unref(policy);
	return 0;
}
