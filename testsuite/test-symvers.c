// SPDX-License-Identifier: LGPL-2.1-or-later
/* Module.symvers: both column orders, lookups, and a malformed line named with its number. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libkmodns.h"

static int failures;
static char last_message[512];

static void check(const char *name, int ok)
{
	printf("%s: %s\n", ok ? "PASS" : "FAIL", name);
	failures += !ok;
}

__attribute__((format(printf, 6, 0)))
static void capture(void *data, int priority, const char *file, int line, const char *fn,
		    const char *format, va_list args)
{
	vsnprintf(last_message, sizeof(last_message), format, args);
}

static char *write_temp(const char *text)
{
	char *path = strdup("/tmp/kmodns-symvers.XXXXXX");
	int fd = mkstemp(path);

	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		abort();
	close(fd);
	return path;
}

static struct kmodns_symvers *load(struct kmodns_ctx *ctx, const char *text, int *err)
{
	char *path = write_temp(text);
	struct kmodns_symvers *sv = NULL;

	*err = kmodns_symvers_new_from_file(ctx, path, &sv);
	unlink(path);
	free(path);
	return sv;
}

int main(void)
{
	struct kmodns_ctx *ctx = kmodns_new();
	struct kmodns_symvers *sv;
	const struct kmodns_export *e;
	uint32_t crc = 0;
	int err;

	kmodns_set_log_fn(ctx, capture, NULL);

	/* Namespace last (5.4.28+, 5.6+); a row without namespace has four fields. */
	sv = load(ctx,
		  "0x12345678\tusb_stor_ctrl_transfer\tdrivers/usb/storage/usb-storage\tEXPORT_SYMBOL_GPL\tUSB_STORAGE\n"
		  "0x00000000\tprintk\tvmlinux\tEXPORT_SYMBOL\t\n"
		  "0xdeadbeef\told_style\tvmlinux\tEXPORT_SYMBOL\n"
		  "0x00000001\tdma_buf_get\tvmlinux\tEXPORT_SYMBOL_GPL\tDMA_BUF\n"
		  "0x00000002\tkvm_x\tarch/x86/kvm/kvm\tEXPORT_SYMBOL_GPL\tmodule:kvm-intel,kvm-amd\n",
		  &err);
	check("namespace-last-loads", err == 0 && sv != NULL);
	if (sv) {
		check("count", kmodns_symvers_get_count(sv) == 5);
		e = kmodns_symvers_find(sv, "usb_stor_ctrl_transfer");
		check("find", e != NULL);
		check("namespace", e && strcmp(kmodns_export_get_namespace(e), "USB_STORAGE") == 0);
		check("owner", e && strcmp(kmodns_export_get_owner(e), "drivers/usb/storage/usb-storage") == 0);
		check("owner-name", e && strcmp(kmodns_export_get_owner_name(e), "usb_storage") == 0);
		check("gpl", e && kmodns_export_is_gpl(e));
		check("crc", e && kmodns_export_get_crc(e, &crc) && crc == 0x12345678);
		e = kmodns_symvers_find(sv, "printk");
		check("plain-empty-namespace", e && strcmp(kmodns_export_get_namespace(e), "") == 0 && !kmodns_export_is_gpl(e));
		e = kmodns_symvers_find(sv, "old_style");
		check("four-fields", e && strcmp(kmodns_export_get_namespace(e), "") == 0);
		e = kmodns_symvers_find(sv, "kvm_x");
		check("module-namespace", e && strcmp(kmodns_export_get_namespace(e), "module:kvm-intel,kvm-amd") == 0);
		check("missing-symbol", kmodns_symvers_find(sv, "nope") == NULL);
		kmodns_symvers_unref(sv);
	}

	/* Early 5.4/5.5: namespace third. */
	sv = load(ctx, "0x11111111\tcxl_x\tCXL\tdrivers/cxl/cxl_core\tEXPORT_SYMBOL_GPL\n"
		       "0x22222222\tplain_x\t\tvmlinux\tEXPORT_SYMBOL\n", &err);
	check("namespace-third-loads", err == 0 && sv != NULL);
	if (sv) {
		e = kmodns_symvers_find(sv, "cxl_x");
		check("namespace-third", e && strcmp(kmodns_export_get_namespace(e), "CXL") == 0 &&
					     strcmp(kmodns_export_get_owner(e), "drivers/cxl/cxl_core") == 0 &&
					     kmodns_export_is_gpl(e));
		e = kmodns_symvers_find(sv, "plain_x");
		check("namespace-third-empty", e && strcmp(kmodns_export_get_namespace(e), "") == 0 &&
						   strcmp(kmodns_export_get_owner(e), "vmlinux") == 0);
		kmodns_symvers_unref(sv);
	}

	/* Malformed: the error names the line. */
	sv = load(ctx, "0x1\ta\tvmlinux\tEXPORT_SYMBOL\t\n0x2\tb\tvmlinux\n", &err);
	check("malformed-fails", sv == NULL && err == -EINVAL);
	check("malformed-names-line", strstr(last_message, ":2: malformed line") != NULL);
	sv = load(ctx, "zz\ta\tvmlinux\tEXPORT_SYMBOL\t\n", &err);
	check("bad-crc", sv == NULL && err < 0 && strstr(last_message, ":1: malformed") != NULL);
	sv = load(ctx, "0x1\ta\tvmlinux\tEXPORT_WHATEVER\t\n", &err);
	check("bad-export-type", sv == NULL && err < 0);
	sv = load(ctx, "", &err);
	check("empty-file", sv != NULL && err == 0 && kmodns_symvers_get_count(sv) == 0);
	kmodns_symvers_unref(sv);
	err = kmodns_symvers_new_from_file(ctx, "/nonexistent/Module.symvers", &sv);
	check("missing-file", err == -ENOENT && sv == NULL && strstr(last_message, "/nonexistent/Module.symvers") != NULL);

	kmodns_unref(ctx);
	return failures ? 1 : 0;
}
