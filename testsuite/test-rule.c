// SPDX-License-Identifier: LGPL-2.1-or-later
/* The kernel's namespace rule, case by case (kernel/module/main.c, 5.4-7.2). */
#include <stdio.h>

#include "libkmodns.h"

static int failures;

#define V(a, b) KMODNS_KERNEL_VERSION(a, b, 0)

static void expect(const char *name, int got, int want)
{
	if (got == want) {
		printf("PASS: %s\n", name);
	} else {
		printf("FAIL: %s: got %d, want %d\n", name, got, want);
		failures++;
	}
}

int main(void)
{
	const char *imports[] = { "USB_STORAGE", "module:ums*", "xhci" };
	const size_t n = 3;

	expect("no-namespace", kmodns_namespace_check("m", imports, n, "", V(6, 12)),
	       KMODNS_ALLOWED_NO_NAMESPACE);
	expect("null-namespace", kmodns_namespace_check("m", imports, n, NULL, V(6, 12)),
	       KMODNS_ALLOWED_NO_NAMESPACE);
	expect("imported", kmodns_namespace_check("m", imports, n, "USB_STORAGE", V(5, 10)),
	       KMODNS_ALLOWED_IMPORTED);
	expect("case-sensitive", kmodns_namespace_check("m", imports, n, "usb_storage", V(6, 1)),
	       KMODNS_REFUSED_MISSING_IMPORT);
	expect("lowercase-namespace", kmodns_namespace_check("m", imports, n, "xhci", V(6, 1)),
	       KMODNS_ALLOWED_IMPORTED);
	expect("missing", kmodns_namespace_check("m", imports, n, "DMA_BUF", V(6, 1)),
	       KMODNS_REFUSED_MISSING_IMPORT);
	expect("missing-no-imports", kmodns_namespace_check("m", NULL, 0, "DMA_BUF", V(6, 1)),
	       KMODNS_REFUSED_MISSING_IMPORT);
	/* 6.16+: module: patterns, '-' = '_', '*' a prefix match */
	expect("module-exact", kmodns_namespace_check("kvm_intel", NULL, 0, "module:kvm-intel,kvm-amd", V(6, 16)),
	       KMODNS_ALLOWED_MODULE_PATTERN);
	expect("module-second", kmodns_namespace_check("kvm_amd", NULL, 0, "module:kvm-intel,kvm-amd", V(6, 17)),
	       KMODNS_ALLOWED_MODULE_PATTERN);
	expect("module-glob", kmodns_namespace_check("snd_hda_codec_realtek", NULL, 0, "module:snd-hda-codec-*", V(7, 2)),
	       KMODNS_ALLOWED_MODULE_PATTERN);
	expect("module-no-prefix-match-without-glob", kmodns_namespace_check("kvm_intel_x", NULL, 0, "module:kvm-intel", V(7, 2)),
	       KMODNS_REFUSED_MISSING_IMPORT);
	expect("module-shorter-name", kmodns_namespace_check("kvm", NULL, 0, "module:kvm-intel", V(7, 2)),
	       KMODNS_REFUSED_MISSING_IMPORT);
	expect("module-other", kmodns_namespace_check("usb_storage", NULL, 0, "module:kvm", V(7, 2)),
	       KMODNS_REFUSED_MISSING_IMPORT);
	expect("module-newest-rules", kmodns_namespace_check("kvm", NULL, 0, "module:kvm", 0),
	       KMODNS_ALLOWED_MODULE_PATTERN);
	/* before 6.16 a module: string is an ordinary namespace */
	expect("module-before-6.16", kmodns_namespace_check("kvm", NULL, 0, "module:kvm", V(6, 15)),
	       KMODNS_REFUSED_MISSING_IMPORT);
	expect("module-before-6.16-imported", kmodns_namespace_check("x", imports, n, "module:ums*", V(6, 12)),
	       KMODNS_ALLOWED_IMPORTED);
	expect("import-module-6.16", kmodns_import_check("module:ums*", V(6, 16)), KMODNS_REFUSED_MODULE_IMPORT);
	expect("import-module-6.12", kmodns_import_check("module:ums*", V(6, 12)), KMODNS_ALLOWED_IMPORTED);
	expect("import-plain", kmodns_import_check("USB_STORAGE", V(7, 2)), KMODNS_ALLOWED_IMPORTED);
	expect("refused", kmodns_verdict_is_refused(KMODNS_REFUSED_MISSING_IMPORT), 1);
	expect("not-refused", kmodns_verdict_is_refused(KMODNS_ALLOWED_MODULE_PATTERN), 0);
	expect("pattern-empty", kmodns_module_pattern_matches("", "a"), 0);
	expect("pattern-star-only", kmodns_module_pattern_matches("*", "anything"), 1);
	expect("version-debian", (int)kmodns_kernel_version_parse("6.12.41+deb13-amd64 SMP preempt mod_unload"),
	       (int)KMODNS_KERNEL_VERSION(6, 12, 41));
	expect("version-sublevel-clamped", (int)kmodns_kernel_version_parse("5.4.290"), (int)KMODNS_KERNEL_VERSION(5, 4, 255));
	expect("version-two-parts", (int)kmodns_kernel_version_parse("6.16-rc1"), (int)KMODNS_KERNEL_VERSION(6, 16, 0));
	expect("version-garbage", (int)kmodns_kernel_version_parse("SMP"), 0);
	expect("version-null", (int)kmodns_kernel_version_parse(NULL), 0);
	return failures ? 1 : 0;
}
