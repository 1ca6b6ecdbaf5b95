// SPDX-License-Identifier: LGPL-2.1-or-later
/* kmod's module name of a path (modname_from_path), as depmod, libkmodns and the tests use it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libkmodns-util.h"

static int failures;

static void check_name(const char *path, size_t len, const char *want)
{
	char *got = modname_from_path_dup(path, len);
	int ok = got != NULL && strcmp(got, want) == 0;

	printf("%s: modname %.*s -> '%.*s'%s\n", ok ? "PASS" : "FAIL", (int)strcspn(path, "\n"), path,
	       got ? (int)strcspn(got, "\n") : 6, got ? got : "(null)",
	       got && strchr(got, '\n') ? " and a newline" : "");
	failures += !ok;
	free(got);
}

int main(void)
{
	char buf[64];

	check_name("kernel/fs/ext4/ext4.ko", 22, "ext4");
	check_name("drivers/usb/storage/usb-storage.ko.xz", 37, "usb_storage");
	check_name("/lib/modules/6.1.0-9-amd64/kernel/a-b-c.ko.zst", 46, "a_b_c");
	/* the first '.', not ".ko": kmod cuts there */
	check_name("extra/foo.bar.ko", 16, "foo");
	check_name("dir.with.dots/x-y", 17, "x_y");
	check_name("vmlinux", 7, "vmlinux");
	check_name("drivers/gpu/drm/i915/i915", 25, "i915");
	check_name("dir/", 4, "");
	check_name("", 0, "");
	/* only len bytes count; a newline before any '.' stays, as in kmod's modules.builtin */
	check_name("kernel/x-y.ko\nkernel/z.ko", 13, "x_y");
	check_name("kernel/nodot\n", 13, "nodot\n");

	/* in place, as libkmodns uses it */
	strcpy(buf, "net/ipv4/nf-nat-ipv4.ko");
	modname_from_path(buf, strlen(buf), buf);
	printf("%s: modname in place -> %s\n", strcmp(buf, "nf_nat_ipv4") ? "FAIL" : "PASS", buf);
	failures += strcmp(buf, "nf_nat_ipv4") != 0;
	return failures ? 1 : 0;
}
