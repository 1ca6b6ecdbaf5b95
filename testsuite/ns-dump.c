// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ns-dump [--relocations|--export-crcs] FILE...: what libkmodns reads from each
 * module, in the .expected format of gen-fixtures (exports sorted by symbol).
 * The tests diff it against fixtures and real kernels' Module.symvers;
 * --export-crcs prints "0xCRC symbol" for each export instead.
 * ns-dump --record DIR MODULE...: the namespace records depmod stored in DIR/modules.dep.bin.
 * ns-dump --vmlinuz IMAGE...: vmlinux's exports read from a kernel image, one line each,
 * sorted: "symbol<TAB>namespace<TAB>EXPORT_type<TAB>0xCRC" ("-" for no CRC).
 */
#include <getopt.h>
#include <stdlib.h>

#include "libkmodns.h"
#include "tool-util.h"

static int export_cmp(const void *a, const void *b)
{
	const struct kmodns_export *const *x = a, *const *y = b;

	return strcmp(kmodns_export_get_symbol(*x), kmodns_export_get_symbol(*y));
}

static bool export_crcs_only;

static int dump(struct kmodns_ctx *ctx, const char *path, unsigned flags)
{
	struct kmodns_module *mod;
	const struct kmodns_export **exports;
	size_t i, n;
	int r = kmodns_module_new_from_path(ctx, path, flags, &mod);

	if (r < 0)
		return r;
	if (export_crcs_only) {
		for (i = 0; i < kmodns_module_get_export_count(mod); i++) {
			const struct kmodns_export *e = kmodns_module_get_export(mod, i);
			uint32_t crc = 0;
			kmodns_export_get_crc(e, &crc);
			printf("0x%08x %s\n", crc, kmodns_export_get_symbol(e));
		}
		kmodns_module_unref(mod);
		return 0;
	}
	printf("module %s\n", kmodns_module_get_name(mod));
	printf("elf %d %s\n", kmodns_module_get_elf_class(mod),
	       kmodns_module_is_big_endian(mod) ? "be" : "le");
	printf("compression %s\n", kmodns_compression_to_string(kmodns_module_get_compression(mod)));
	n = kmodns_module_get_export_count(mod);
	exports = calloc(n ? n : 1, sizeof(*exports));
	if (exports == NULL)
		abort();
	for (i = 0; i < n; i++)
		exports[i] = kmodns_module_get_export(mod, i);
	qsort(exports, n, sizeof(*exports), export_cmp);
	for (i = 0; i < n; i++) {
		const char *ns = kmodns_export_get_namespace(exports[i]);
		printf("export %s %s %s\n", kmodns_export_get_symbol(exports[i]),
		       kmodns_export_type_to_string(kmodns_export_get_type(exports[i])),
		       ns[0] ? ns : "-");
	}
	free(exports);
	for (i = 0; i < kmodns_module_get_import_count(mod); i++)
		printf("import %s\n", kmodns_module_get_import(mod, i));
	printf("imports_raw %zu\n", kmodns_module_get_import_raw_count(mod));
	for (i = 0; i < kmodns_module_get_undefined_count(mod); i++) {
		const struct kmodns_symbol *s = kmodns_module_get_undefined(mod, i);
		uint32_t crc;
		printf("undef %s ", kmodns_symbol_get_name(s));
		if (kmodns_symbol_get_crc(s, &crc))
			printf("0x%08x", crc);
		else
			printf("-");
		printf(" %s\n", kmodns_symbol_is_weak(s) ? "weak" : "global");
	}
	kmodns_module_unref(mod);
	return 0;
}

static int dump_record(struct kmodns_ctx *ctx, const char *dir, const char *name)
{
	struct kmodns_ns_record *rec;
	size_t i;
	int r = kmodns_ns_record_lookup(ctx, dir, name, &rec);

	if (r < 0) {
		printf("record %s none (%s)\n", name, strerror(-r));
		return r;
	}
	printf("record %s vmlinux=%s unresolved=%zu\n", name,
	       kmodns_ns_record_vmlinux_known(rec) ? "known" : "unknown",
	       kmodns_ns_record_get_unresolved_count(rec));
	for (i = 0; i < kmodns_ns_record_get_import_count(rec); i++)
		printf("import %s %s\n", kmodns_ns_record_get_import(rec, i),
		       kmodns_verdict_is_refused(kmodns_ns_record_get_import_verdict(rec, i)) ? "refused" : "allowed");
	for (i = 0; i < kmodns_ns_record_get_export_count(rec); i++)
		printf("export %s\n", kmodns_ns_record_get_export(rec, i));
	for (i = 0; i < kmodns_ns_record_get_require_count(rec); i++)
		printf("require %s %s %s %s\n", kmodns_ns_record_get_require_namespace(rec, i),
		       kmodns_ns_record_get_require_exporter(rec, i), kmodns_ns_record_get_require_symbol(rec, i),
		       kmodns_verdict_is_refused(kmodns_ns_record_get_require_verdict(rec, i)) ? "refused" : "allowed");
	for (i = 0; i < kmodns_ns_record_get_unused_count(rec); i++)
		printf("unused %s\n", kmodns_ns_record_get_unused(rec, i));
	kmodns_ns_record_unref(rec);
	return 0;
}

static int dump_vmlinuz(struct kmodns_ctx *ctx, const char *path)
{
	struct kmodns_symvers *sv;
	const struct kmodns_export **exports;
	size_t i, n;
	int r = kmodns_symvers_new_from_vmlinuz(ctx, path, &sv);

	if (r < 0)
		return r;
	n = kmodns_symvers_get_count(sv);
	exports = calloc(n ? n : 1, sizeof(*exports));
	if (exports == NULL)
		abort();
	for (i = 0; i < n; i++)
		exports[i] = kmodns_symvers_get_export(sv, i);
	qsort(exports, n, sizeof(*exports), export_cmp);
	for (i = 0; i < n; i++) {
		uint32_t crc;
		printf("%s\t%s\t%s\t", kmodns_export_get_symbol(exports[i]),
		       kmodns_export_get_namespace(exports[i]),
		       kmodns_export_type_to_string(kmodns_export_get_type(exports[i])));
		if (kmodns_export_get_crc(exports[i], &crc))
			printf("0x%08x\n", crc);
		else
			printf("-\n");
	}
	free(exports);
	kmodns_symvers_unref(sv);
	return 0;
}

int main(int argc, char *argv[])
{
	struct kmodns_ctx *ctx = kmodns_new();
	unsigned flags = 0;
	int i, failed = 0;

	if (argc > 1 && streq(argv[1], "--relocations")) {
		flags |= KMODNS_MODULE_EXPORTS_BY_RELOCATIONS;
		argv++, argc--;
	} else if (argc > 1 && streq(argv[1], "--export-crcs")) {
		export_crcs_only = true;
		argv++, argc--;
	}
	kmodns_set_log_fn(ctx, tool_log_kmodns, NULL);
	if (argc > 2 && streq(argv[1], "--record")) {
		for (i = 3; i < argc; i++)
			if (dump_record(ctx, argv[2], argv[i]) < 0)
				failed = 1;
		kmodns_unref(ctx);
		return failed;
	}
	if (argc > 1 && streq(argv[1], "--vmlinuz")) {
		for (i = 2; i < argc; i++)
			if (dump_vmlinuz(ctx, argv[i]) < 0)
				failed = 1;
		kmodns_unref(ctx);
		return failed;
	}
	for (i = 1; i < argc; i++)
		if (dump(ctx, argv[i], flags) < 0)
			failed = 1;
	kmodns_unref(ctx);
	return failed;
}
