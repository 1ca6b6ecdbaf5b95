/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What every libFuzzer harness of testsuite/fuzz does alike: one quiet library context
 * whose messages are still formatted (a bad argument to a format shows up), the input
 * as a file for readers that take a path, and a walk over everything a module object
 * hands out, so that every string it returns is read to its end.
 */
#pragma once

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <syslog.h>
#include <unistd.h>

#include "libkmodns.h"
#include "libkmodns-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

_printf_(6, 0) static void fuzz_log(void *data, int priority, const char *file, int line, const char *fn,
		     const char *format, va_list args)
{
	char buf[512];

	vsnprintf(buf, sizeof(buf), format, args);
}

static inline struct kmodns_ctx *fuzz_ctx(void)
{
	static struct kmodns_ctx *ctx;

	if (ctx == NULL) {
		ctx = kmodns_new();
		if (ctx == NULL)
			abort();
		kmodns_set_log_fn(ctx, fuzz_log, NULL);
		kmodns_set_log_priority(ctx, LOG_DEBUG);
	}
	return ctx;
}

/* Tool messages (tool_err) go to /dev/null while fn runs: sanitizer reports do not use stdio. */
static inline FILE *fuzz_devnull(void)
{
	static FILE *devnull;

	if (devnull == NULL && (devnull = fopen("/dev/null", "we")) == NULL)
		abort();
	return devnull;
}

/* The input as the only content of a memory file; its path (/proc/self/fd/N) stays valid. */
static inline const char *fuzz_file(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];

	if (fd < 0) {
		fd = memfd_create("kmodns-fuzz", MFD_CLOEXEC);
		if (fd < 0)
			abort();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) < 0 || (size > 0 && pwrite(fd, data, size, 0) != (ssize_t)size))
		abort();
	return path;
}

/* Reads s to its end: an unterminated or freed string is a sanitizer report here. */
static inline size_t fuzz_touch(const char *s)
{
	return s ? strlen(s) : 0;
}

static inline void fuzz_walk_export(const struct kmodns_export *e)
{
	uint32_t crc;

	fuzz_touch(kmodns_export_get_symbol(e));
	fuzz_touch(kmodns_export_get_namespace(e));
	fuzz_touch(kmodns_export_type_to_string(kmodns_export_get_type(e)));
	fuzz_touch(kmodns_export_get_owner(e));
	fuzz_touch(kmodns_export_get_owner_name(e));
	kmodns_export_is_gpl(e);
	kmodns_export_get_crc(e, &crc);
}

static inline void fuzz_walk_record(const struct kmodns_ns_record *rec)
{
	size_t i;

	kmodns_ns_record_vmlinux_known(rec);
	for (i = 0; i < kmodns_ns_record_get_import_count(rec); i++) {
		fuzz_touch(kmodns_ns_record_get_import(rec, i));
		kmodns_ns_record_get_import_verdict(rec, i);
	}
	for (i = 0; i < kmodns_ns_record_get_export_count(rec); i++)
		fuzz_touch(kmodns_ns_record_get_export(rec, i));
	for (i = 0; i < kmodns_ns_record_get_unused_count(rec); i++)
		fuzz_touch(kmodns_ns_record_get_unused(rec, i));
	for (i = 0; i < kmodns_ns_record_get_require_count(rec); i++) {
		fuzz_touch(kmodns_ns_record_get_require_namespace(rec, i));
		fuzz_touch(kmodns_ns_record_get_require_exporter(rec, i));
		fuzz_touch(kmodns_ns_record_get_require_symbol(rec, i));
		kmodns_ns_record_get_require_verdict(rec, i);
	}
	kmodns_ns_record_get_unresolved_count(rec);
}

/* Exports the namespace rule gets to see: a few of vmlinux's, with and without namespaces. */
static const struct kmodns_export *fuzz_lookup(void *data, const char *symbol)
{
	return kmodns_symvers_find(data, symbol);
}

static inline struct kmodns_symvers *fuzz_symvers(void)
{
	static const char rows[] =
		"0x12345678\tsample_core_register\tvmlinux\tEXPORT_SYMBOL_GPL\tSAMPLE_CORE\n"
		"0x00000001\tusb_stor_probe1\tdrivers/usb/storage/usb-storage\tEXPORT_SYMBOL_GPL\tUSB_STORAGE\n"
		"0x00000002\tprintk\tvmlinux\tEXPORT_SYMBOL\t\n"
		"0x00000003\tdma_buf_get\tvmlinux\tEXPORT_SYMBOL_GPL\tDMA_BUF\n"
		"0x00000004\tmodule_only\tvmlinux\tEXPORT_SYMBOL_GPL\tmodule:sample_*\n";
	static struct kmodns_symvers *sv;
	char path[] = "/tmp/kmodns-fuzz-symvers.XXXXXX";
	int fd;

	if (sv != NULL)
		return sv;
	fd = mkstemp(path);
	if (fd < 0 || write(fd, rows, sizeof(rows) - 1) != (ssize_t)(sizeof(rows) - 1) ||
	    kmodns_symvers_new_from_file(fuzz_ctx(), path, &sv) < 0)
		abort();
	close(fd);
	unlink(path);
	return sv;
}

/* Everything a module hands out, then what depmod makes of it: requirements and a record. */
static inline void fuzz_walk_module(const struct kmodns_module *mod)
{
	struct kmodns_requires *req = NULL;
	struct kmodns_ns_record *rec = NULL;
	char *text = NULL;
	uint32_t crc;
	size_t i;

	fuzz_touch(kmodns_module_get_name(mod));
	fuzz_touch(kmodns_module_get_path(mod));
	fuzz_touch(kmodns_compression_to_string(kmodns_module_get_compression(mod)));
	kmodns_module_get_elf_class(mod);
	kmodns_module_is_big_endian(mod);
	fuzz_touch(kmodns_module_get_vermagic(mod));
	kmodns_module_get_kernel_version(mod);
	for (i = 0; i < kmodns_module_get_export_count(mod); i++)
		fuzz_walk_export(kmodns_module_get_export(mod, i));
	for (i = 0; i < kmodns_module_get_export_namespace_count(mod); i++)
		fuzz_touch(kmodns_module_get_export_namespace(mod, i));
	for (i = 0; i < kmodns_module_get_import_count(mod); i++)
		fuzz_touch(kmodns_module_get_import(mod, i));
	kmodns_module_get_import_raw_count(mod);
	for (i = 0; i < kmodns_module_get_modinfo_count(mod); i++) {
		fuzz_touch(kmodns_module_get_modinfo_key(mod, i));
		fuzz_touch(kmodns_module_get_modinfo_value(mod, i));
	}
	for (i = 0; i < kmodns_module_get_version_count(mod); i++) {
		fuzz_touch(kmodns_module_get_version_symbol(mod, i));
		kmodns_module_get_version_crc(mod, i);
	}
	for (i = 0; i < kmodns_module_get_undefined_count(mod); i++) {
		const struct kmodns_symbol *sym = kmodns_module_get_undefined(mod, i);
		fuzz_touch(kmodns_symbol_get_name(sym));
		kmodns_symbol_is_weak(sym);
		kmodns_symbol_get_crc(sym, &crc);
	}
	if (kmodns_module_get_requires(mod, fuzz_lookup, fuzz_symvers(), &req) == 0) {
		for (i = 0; i < kmodns_requires_get_count(req); i++) {
			fuzz_touch(kmodns_requires_get_namespace(req, i));
			fuzz_walk_export(kmodns_requires_get_export(req, i));
			kmodns_requires_get_verdict(req, i);
		}
		kmodns_requires_get_unresolved_count(req);
		for (i = 0; i < kmodns_requires_get_unused_import_count(req); i++)
			fuzz_touch(kmodns_requires_get_unused_import(req, i));
	}
	/* what depmod stores must read back */
	if (kmodns_ns_record_format(mod, req, true, &text) == 0) {
		if (kmodns_ns_record_new_from_text(text, &rec) != 0)
			abort();
		fuzz_walk_record(rec);
		kmodns_ns_record_unref(rec);
		free(text);
	}
	kmodns_requires_unref(req);
}
