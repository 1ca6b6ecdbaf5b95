// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * gen-fixtures OUTDIR - writes synthetic kernel modules (ELF ET_REL) covering every on-disk era
 * of symbol namespaces, each with NAME.expected: what a correct reader must find in it.
 *
 * One table (fixtures[]) describes every module; one generic writer turns an entry into an
 * in-memory object (sections, symbols, relocations), libelf lays it out, and the .expected text
 * is written from the table entry itself, never by reading the file back.
 * See ../shared/docs/namespaces-on-disk.md for the eras.
 *
 * Also OUTDIR/kernel/: vmlinux ELF files (ET_EXEC, export tables at run-time addresses) of
 * several classes, byte orders and entry layouts, some inside x86 bzImages with each payload
 * compression, each with FILE.expected (the lines of `ns-dump --vmlinuz`).
 *
 * gen-fixtures --tree OUTDIR - writes whole module trees OUTDIR/<case>/lib/modules/1.0.0-<case>/
 * (tree_cases[]) for comparing depmod with kmod's on dependency chains, modules.order, duplicate
 * exports, built-in modules, devnames, cycles, weak and unknown symbols, depmod.d and CRCs.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <lz4.h>
#include <lzma.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ---- what a fixture is ------------------------------------------------------------------- */

/* The on-disk forms, oldest first (comparisons like era >= ERA_5_5 rely on the order). */
enum era {
	ERA_RFC,     /* 2018 RFC: __ksymtab_<sym>.<NS>, imports in section __knsimport */
	ERA_5_4_RC1, /* __ksymtab_<sym>.<NS>, __kstrtab_ns_<sym> */
	ERA_5_4_RC3, /* __ksymtab_<NS>.<sym>, __kstrtabns_<sym> */
	ERA_5_4,     /* __ksymtab_<sym>; __kstrtabns_<sym> only for namespaced exports */
	ERA_5_5,     /* 5.5 - 7.0: every export has __kstrtabns_<sym> ("" = none) */
	ERA_7_1,     /* one __ksymtab plus __kflagstab (bit 0 = GPL-only), __flags_<sym> */
};

/* Export types, in the order of enum kmodns_export_type. */
enum kind { K_SYMBOL, K_GPL, K_GPL_FUTURE, K_UNUSED, K_UNUSED_GPL, K_COUNT };
static const char *const kind_name[K_COUNT] = {
	"EXPORT_SYMBOL", "EXPORT_SYMBOL_GPL", "EXPORT_SYMBOL_GPL_FUTURE",
	"EXPORT_UNUSED_SYMBOL", "EXPORT_UNUSED_SYMBOL_GPL",
};
static const char *const kind_section[K_COUNT] = {
	"__ksymtab", "__ksymtab_gpl", "__ksymtab_gpl_future",
	"__ksymtab_unused", "__ksymtab_unused_gpl",
};
/* With MODVERSIONS each __ksymtab* has a parallel array of 4-byte CRCs. */
static const char *const kind_crc_section[K_COUNT] = {
	"__kcrctab", "__kcrctab_gpl", "__kcrctab_gpl_future",
	"__kcrctab_unused", "__kcrctab_unused_gpl",
};

enum compression { COMP_NONE, COMP_XZ, COMP_ZSTD, COMP_GZIP };
static const char *const compression_name[] = { "none", "xz", "zstd", "gzip" };

struct arch {
	unsigned char elfclass, data; /* ELFCLASS32/64, ELFDATA2LSB/MSB */
	unsigned machine, e_flags;
	bool rela;                    /* addends in .rela sections, else in the section data */
	bool prel32;                  /* 12-byte kernel_symbol of 32-bit offsets, else 3 pointers */
	unsigned field_reloc;         /* relocation of one kernel_symbol field */
	unsigned ptr_reloc;           /* relocation of a plain pointer */
	unsigned char ret[4];         /* a return instruction, to give .text believable bytes */
	unsigned ret_len;
};

static const struct arch arch_x86_64 = {
	ELFCLASS64, ELFDATA2LSB, EM_X86_64, 0, true, true,
	R_X86_64_PC32, R_X86_64_64, { 0xc3 }, 1,
};
/* x86-64 before PREL32 (4.19), when the RFC was written: kernel_symbol is three pointers. */
static const struct arch arch_x86_64_abs = {
	ELFCLASS64, ELFDATA2LSB, EM_X86_64, 0, true, false,
	R_X86_64_64, R_X86_64_64, { 0xc3 }, 1,
};
static const struct arch arch_i386 = {
	ELFCLASS32, ELFDATA2LSB, EM_386, 0, false, true,
	R_386_PC32, R_386_32, { 0xc3 }, 1,
};
/* Big-endian ppc64 is ELFv1 (e_flags 1); blr. */
static const struct arch arch_ppc64 = {
	ELFCLASS64, ELFDATA2MSB, EM_PPC64, 1, true, false,
	R_PPC64_ADDR64, R_PPC64_ADDR64, { 0x4e, 0x80, 0x00, 0x20 }, 4,
};
/* bx lr, stored big-endian as in a BE32 object. */
static const struct arch arch_armeb = {
	ELFCLASS32, ELFDATA2MSB, EM_ARM, EF_ARM_EABI_VER5, false, false,
	R_ARM_ABS32, R_ARM_ABS32, { 0xe1, 0x2f, 0xff, 0x1e }, 4,
};

struct export {
	const char *sym;
	enum kind kind;
	const char *ns; /* NULL = no namespace */
	uint32_t crc;   /* 0, or its CRC: __kcrctab and Module.symvers (sample tree only) */
};

enum undef_flags {
	U_WEAK = 1 << 0,  /* STB_WEAK */
	U_NOCRC = 1 << 1, /* left out of __versions */
	U_NOSYM = 1 << 2, /* only a __versions entry (like module_layout), no symbol */
};

struct undef {
	const char *sym;
	uint32_t crc;
	unsigned flags;
};

struct fixture {
	const char *file;     /* path under OUTDIR; NAME.expected goes beside it */
	const char *name;     /* .modinfo name= and .gnu.linkonce.this_module */
	const char *vermagic;
	enum era era;
	const struct arch *arch;
	enum compression compression;
	bool stripped;        /* no __ksymtab_*, __kstrtab*, __flags_* symbols: relocations only */
	bool versions;        /* write __versions */
	bool signature;       /* append a fake PKCS#7 module signature */
	const struct export *exports;     /* { NULL }-terminated, in section order */
	const struct undef *undefs;       /* { NULL }-terminated, in symbol-table order */
	const char *const *modinfo;       /* records between license= and name=; NULL-terminated */
	const char *const *knsimport;     /* RFC imports, in section order; NULL-terminated */
};

#define EXPORTS(...) ((const struct export[]){ __VA_ARGS__, { NULL, 0, NULL, 0 } })
#define NO_EXPORTS ((const struct export[]){ { NULL, 0, NULL, 0 } })
#define UNDEFS(...) ((const struct undef[]){ __VA_ARGS__, { NULL, 0, 0 } })
#define STRINGS(...) ((const char *const[]){ __VA_ARGS__, NULL })

/* ---- the fixtures ------------------------------------------------------------------------ */

static const struct export v6_12_exports[] = {
	{ "v612_open", K_GPL, "USB_STORAGE", 0 },
	{ "v612_close", K_SYMBOL, "xhci", 0 },
	{ "v612_restricted", K_GPL, "module:usb-storage,ums_*", 0 },
	{ "v612_plain", K_SYMBOL, NULL, 0 },
	{ "v612_gpl_plain", K_GPL, NULL, 0 },
	{ NULL, 0, NULL, 0 },
};
static const struct undef v6_12_undefs[] = {
	{ "usb_stor_probe1", 0x5a1d2c3e, 0 },
	{ "pwm_apply_might_sleep", 0x0c0ffee1, 0 },
	{ "xhci_dbg_trace", 0x7e57ab1e, U_WEAK },
	{ "usb_stor_disconnect", 0, U_NOCRC },
	{ NULL, 0, 0 },
};
/* Imports interleaved with other records: raw PWM, USB_STORAGE, PWM, PWM. */
static const char *const v6_12_modinfo[] = {
	"description=6.12-era namespaced exports",
	"import_ns=PWM",
	"alias=usb:v1234p5678d*dc*dsc*dp*ic*isc*ip*in*",
	"import_ns=USB_STORAGE",
	"import_ns=PWM",
	"author=kmodns testsuite",
	"import_ns=PWM",
	NULL,
};
/* v6.12 under another file and module name: compressed, signed copies. */
#define V6_12_LIKE(file_, name_, ...)                                                          \
	{ .file = file_, .name = name_, .vermagic = "6.12.0 SMP mod_unload modversions ",      \
	  .era = ERA_5_5, .arch = &arch_x86_64, .versions = true, .exports = v6_12_exports,    \
	  .undefs = v6_12_undefs, .modinfo = v6_12_modinfo, __VA_ARGS__ }

/* The sample tree for the README: one kernel, a provider, a user and a broken user. */
#define SAMPLE_MODDIR "sample/lib/modules/6.12.0-sample"
#define SAMPLE_KDIR SAMPLE_MODDIR "/kernel/"
#define SAMPLE_VERMAGIC "6.12.0-sample SMP preempt mod_unload modversions "
#define CRC_PRINTK 0x1f2e3d4cu
#define CRC_KFREE 0x2b3c4d5eu
#define CRC_DMA_BUF_GET 0x3c4d5e6fu
#define CRC_SAMPLE_CORE_REGISTER 0x4d5e6f70u
#define CRC_SAMPLE_CORE_VERSION 0x5e6f7081u

/* vmlinux rows of the sample Module.symvers. */
static const struct export sample_vmlinux_exports[] = {
	{ "_printk", K_SYMBOL, NULL, CRC_PRINTK },
	{ "kfree", K_SYMBOL, NULL, CRC_KFREE },
	{ "kmalloc_trace", K_SYMBOL, NULL, 0x6f708192u },
	{ "dma_buf_get", K_GPL, "DMA_BUF", CRC_DMA_BUF_GET },
	{ "dma_buf_put", K_GPL, "DMA_BUF", 0x708192a3u },
	{ "device_initialize", K_GPL, NULL, 0x8192a3b4u },
	{ NULL, K_SYMBOL, NULL, 0 },
};

static const struct fixture fixtures[] = {
	{ .file = "rfc.ko", .name = "rfc", .vermagic = "4.18.0 SMP mod_unload ",
	  .era = ERA_RFC, .arch = &arch_x86_64_abs,
	  .exports = EXPORTS({ "rfc_probe", K_SYMBOL, "USB_STORAGE", 0 },
			     { "rfc_remove", K_GPL, "USB_STORAGE", 0 },
			     { "rfc_reset", K_GPL, NULL, 0 },
			     { "rfc_legacy", K_SYMBOL, NULL, 0 }),
	  .undefs = UNDEFS({ "usb_register_driver", 0, 0 }, { "scsi_add_host_with_dma", 0, 0 },
			   { "kfree", 0, 0 }),
	  .modinfo = STRINGS("description=RFC-era namespaced exports"),
	  .knsimport = STRINGS("USB_COMMON", "SCSI", "USB_COMMON") },

	{ .file = "v5.4-rc1.ko", .name = "v5_4_rc1", .vermagic = "5.4.0-rc1 SMP mod_unload ",
	  .era = ERA_5_4_RC1, .arch = &arch_x86_64,
	  .exports = EXPORTS({ "rc1_attach", K_GPL, "USB_STORAGE", 0 },
			     { "rc1_detach", K_SYMBOL, "USB_STORAGE", 0 },
			     { "rc1_plain", K_SYMBOL, NULL, 0 },
			     { "rc1_gpl_plain", K_GPL, NULL, 0 },
			     { "rc1_debug", K_GPL, "USB_STORAGE_DEBUG", 0 }),
	  .undefs = UNDEFS({ "usb_register_driver", 0, 0 }, { "crypto_alloc_base", 0, 0 },
			   { "_printk", 0, 0 }),
	  .modinfo = STRINGS("import_ns=CRYPTO_INTERNAL", "import_ns=USB_COMMON") },

	{ .file = "v5.4-rc3.ko", .name = "v5_4_rc3", .vermagic = "5.4.0-rc3 SMP mod_unload ",
	  .era = ERA_5_4_RC3, .arch = &arch_x86_64,
	  .exports = EXPORTS({ "rc3_attach", K_GPL, "USB_STORAGE", 0 },
			     { "rc3_plain", K_SYMBOL, NULL, 0 },
			     { "rc3_detach", K_SYMBOL, "SCSI_CORE", 0 },
			     { "rc3_gpl_plain", K_GPL, NULL, 0 }),
	  .undefs = UNDEFS({ "dma_buf_get", 0, 0 }, { "kfree", 0, 0 }),
	  .modinfo = STRINGS("import_ns=DMA_BUF") },

	{ .file = "v5.4.ko", .name = "v5_4", .vermagic = "5.4.0 SMP mod_unload ",
	  .era = ERA_5_4, .arch = &arch_x86_64,
	  .exports = EXPORTS({ "v54_plain", K_SYMBOL, NULL, 0 },
			     { "v54_open", K_GPL, "USB_STORAGE", 0 },
			     { "v54_gpl_plain", K_GPL, NULL, 0 },
			     { "v54_close", K_SYMBOL, "USB_STORAGE", 0 }),
	  .undefs = UNDEFS({ "usb_stor_probe1", 0, 0 }, { "usb_stor_probe2", 0, 0 },
			   { "_printk", 0, 0 }),
	  .modinfo = STRINGS("import_ns=USB_STORAGE", "description=5.4-era exports",
			     "import_ns=USB_STORAGE") },

	{ .file = "v5.10.ko", .name = "v5_10", .vermagic = "5.10.0 SMP mod_unload modversions ",
	  .era = ERA_5_5, .arch = &arch_x86_64, .versions = true,
	  .exports = EXPORTS({ "v510_open", K_GPL, "USB_STORAGE", 0 },
			     { "v510_plain", K_SYMBOL, NULL, 0 },
			     { "v510_close", K_SYMBOL, "USB_STORAGE", 0 },
			     { "v510_old", K_UNUSED, NULL, 0 },
			     { "v510_old_gpl", K_UNUSED_GPL, NULL, 0 },
			     { "v510_future", K_GPL_FUTURE, NULL, 0 }),
	  /* 5.10's __versions starts with module_layout, which is no undefined symbol. */
	  .undefs = UNDEFS({ "module_layout", 0x2f5e9c10, U_NOSYM },
			   { "usb_stor_probe1", 0x11223344, 0 },
			   { "scsi_add_host_with_dma", 0x55667788, 0 },
			   { "usb_stor_disconnect", 0, U_NOCRC }),
	  .modinfo = STRINGS("import_ns=USB_STORAGE") },

	V6_12_LIKE("v6.12.ko", "v6_12"),

	{ .file = "v7.2.ko", .name = "v7_2", .vermagic = "7.2.0 SMP preempt mod_unload ",
	  .era = ERA_7_1, .arch = &arch_x86_64,
	  .exports = EXPORTS({ "v72_open", K_GPL, "USB_STORAGE", 0 },
			     { "v72_plain", K_SYMBOL, NULL, 0 },
			     { "v72_for_modules", K_GPL, "module:foo,bar-*", 0 },
			     { "v72_buf", K_SYMBOL, "DMA_BUF", 0 },
			     { "v72_gpl_plain", K_GPL, NULL, 0 }),
	  .undefs = UNDEFS({ "dma_buf_get", 0, 0 }, { "usb_stor_probe1", 0, 0 },
			   { "kfree", 0, U_WEAK }),
	  .modinfo = STRINGS("import_ns=DMA_BUF", "import_ns=USB_STORAGE") },

	{ .file = "i386.ko", .name = "i386",
	  .vermagic = "6.1.0 SMP preempt mod_unload modversions 686 ",
	  .era = ERA_5_5, .arch = &arch_i386, .versions = true,
	  .exports = EXPORTS({ "i386_open", K_GPL, "USB_STORAGE", 0 },
			     { "i386_plain", K_SYMBOL, NULL, 0 },
			     { "i386_close", K_SYMBOL, "xhci", 0 },
			     { "i386_gpl_plain", K_GPL, NULL, 0 }),
	  .undefs = UNDEFS({ "usb_stor_probe1", 0x89abcdef, 0 }, { "kfree", 0x01234567, 0 },
			   { "pwm_get", 0, U_NOCRC | U_WEAK }),
	  .modinfo = STRINGS("import_ns=USB_STORAGE", "import_ns=PWM") },

	{ .file = "ppc64.ko", .name = "ppc64", .vermagic = "6.12.0 SMP mod_unload modversions ",
	  .era = ERA_5_5, .arch = &arch_ppc64, .versions = true,
	  .exports = EXPORTS({ "ppc64_open", K_GPL, "USB_STORAGE", 0 },
			     { "ppc64_plain", K_SYMBOL, NULL, 0 },
			     { "ppc64_close", K_SYMBOL, "USB_STORAGE", 0 },
			     { "ppc64_gpl_plain", K_GPL, NULL, 0 }),
	  .undefs = UNDEFS({ "usb_stor_probe1", 0xdeadbeef, 0 }, { "kfree", 0x00c0ffee, 0 },
			   { "of_find_node_by_name", 0, U_NOCRC }),
	  .modinfo = STRINGS("import_ns=USB_STORAGE") },

	{ .file = "armeb.ko", .name = "armeb",
	  .vermagic = "6.12.0 SMP mod_unload modversions ARMv7 p2v8 ",
	  .era = ERA_5_5, .arch = &arch_armeb, .versions = true,
	  .exports = EXPORTS({ "armeb_open", K_GPL, "USB_STORAGE", 0 },
			     { "armeb_plain", K_SYMBOL, NULL, 0 },
			     { "armeb_close", K_SYMBOL, "USB_STORAGE", 0 },
			     { "armeb_gpl_plain", K_GPL, NULL, 0 }),
	  .undefs = UNDEFS({ "usb_stor_probe1", 0xa1b2c3d4, 0 }, { "kfree", 0x0a0b0c0d, 0 },
			   { "dma_buf_put", 0x10203040, U_WEAK }),
	  .modinfo = STRINGS("import_ns=USB_STORAGE", "import_ns=DMA_BUF") },

	{ .file = "stripped.ko", .name = "stripped",
	  .vermagic = "6.12.0 SMP mod_unload modversions ",
	  .era = ERA_5_5, .arch = &arch_x86_64, .stripped = true, .versions = true,
	  .exports = EXPORTS({ "stripped_open", K_GPL, "USB_STORAGE", 0 },
			     { "stripped_plain", K_SYMBOL, NULL, 0 },
			     { "stripped_close", K_SYMBOL, "xhci", 0 },
			     { "stripped_gpl_plain", K_GPL, NULL, 0 }),
	  .undefs = UNDEFS({ "usb_stor_probe1", 0x13579bdf, 0 }, { "kfree", 0x2468ace0, 0 }),
	  .modinfo = STRINGS("import_ns=USB_STORAGE") },

	{ .file = "stripped-rel.ko", .name = "stripped_rel",
	  .vermagic = "6.1.0 SMP preempt mod_unload 686 ",
	  .era = ERA_5_5, .arch = &arch_i386, .stripped = true,
	  .exports = EXPORTS({ "srel_open", K_GPL, "USB_STORAGE", 0 },
			     { "srel_plain", K_SYMBOL, NULL, 0 },
			     { "srel_close", K_SYMBOL, "USB_STORAGE", 0 }),
	  .undefs = UNDEFS({ "usb_stor_probe1", 0, 0 }, { "kfree", 0, 0 }),
	  .modinfo = STRINGS("import_ns=USB_STORAGE") },

	{ .file = "stripped-v7.ko", .name = "stripped_v7",
	  .vermagic = "7.2.0 SMP preempt mod_unload ",
	  .era = ERA_7_1, .arch = &arch_x86_64, .stripped = true,
	  .exports = EXPORTS({ "sv7_open", K_GPL, "USB_STORAGE", 0 },
			     { "sv7_plain", K_SYMBOL, NULL, 0 },
			     { "sv7_for_modules", K_GPL, "module:foo,bar-*", 0 },
			     { "sv7_buf", K_SYMBOL, "DMA_BUF", 0 }),
	  .undefs = UNDEFS({ "dma_buf_get", 0, 0 }, { "kfree", 0, 0 }),
	  .modinfo = STRINGS("import_ns=DMA_BUF") },

	V6_12_LIKE("v6.12-xz.ko.xz", "v6_12_xz", .compression = COMP_XZ),
	V6_12_LIKE("v6.12-zst.ko.zst", "v6_12_zst", .compression = COMP_ZSTD),
	V6_12_LIKE("v6.12-gz.ko.gz", "v6_12_gz", .compression = COMP_GZIP),
	/* xz bytes under a .ko name: a reader must go by magic. */
	V6_12_LIKE("misnamed.ko", "misnamed", .compression = COMP_XZ),
	V6_12_LIKE("signed.ko", "signed", .signature = true),

	{ .file = SAMPLE_KDIR "drivers/sample/sample_core.ko", .name = "sample_core",
	  .vermagic = SAMPLE_VERMAGIC, .era = ERA_5_5, .arch = &arch_x86_64, .versions = true,
	  .exports = EXPORTS({ "sample_core_register", K_GPL, "SAMPLE_CORE",
			       CRC_SAMPLE_CORE_REGISTER },
			     { "sample_core_unregister", K_GPL, "SAMPLE_CORE", 0x6f7081a2u },
			     { "sample_core_version", K_SYMBOL, NULL, CRC_SAMPLE_CORE_VERSION }),
	  .undefs = UNDEFS({ "_printk", CRC_PRINTK, 0 }, { "kfree", CRC_KFREE, 0 }),
	  .modinfo = STRINGS("description=sample namespace provider", "depends=") },

	{ .file = SAMPLE_KDIR "drivers/sample/sample_user.ko", .name = "sample_user",
	  .vermagic = SAMPLE_VERMAGIC, .era = ERA_5_5, .arch = &arch_x86_64, .versions = true,
	  .exports = NO_EXPORTS,
	  .undefs = UNDEFS({ "sample_core_register", CRC_SAMPLE_CORE_REGISTER, 0 },
			   { "sample_core_version", CRC_SAMPLE_CORE_VERSION, 0 },
			   { "dma_buf_get", CRC_DMA_BUF_GET, 0 },
			   { "_printk", CRC_PRINTK, 0 }),
	  .modinfo = STRINGS("description=sample namespace user", "import_ns=SAMPLE_CORE",
			     "import_ns=DMA_BUF", "depends=sample_core") },

	/* Uses a SAMPLE_CORE symbol without importing SAMPLE_CORE; imports one it never uses. */
	{ .file = SAMPLE_KDIR "drivers/sample/sample_bad.ko", .name = "sample_bad",
	  .vermagic = SAMPLE_VERMAGIC, .era = ERA_5_5, .arch = &arch_x86_64, .versions = true,
	  .exports = NO_EXPORTS,
	  .undefs = UNDEFS({ "sample_core_register", CRC_SAMPLE_CORE_REGISTER, 0 },
			   { "_printk", CRC_PRINTK, 0 }),
	  .modinfo = STRINGS("description=sample module missing an import",
			     "import_ns=UNUSED_NS", "depends=sample_core") },
};

/* ---- dependency-test trees (--tree OUTDIR) ---------------------------------------------------
 *
 * Each case is a whole module tree OUTDIR/<case>/lib/modules/1.0.0-<case>/ of x86-64 6.x-style
 * modules plus its index inputs (modules.order, modules.builtin*, Module.symvers, System.map,
 * depmod.d files), for comparing our depmod with kmod's on what the real trees do not show.
 * A module's .file is relative to OUTDIR/<case>/; "@CASEDIR@" in a side file becomes the
 * absolute path of OUTDIR/<case>.  OUTDIR/<case>/kmod-namespace-strings lists the namespaces of
 * exports that have no CRC: kmod's depmod reads those exports from __ksymtab_strings and so takes
 * the namespace strings for symbols too.
 */

/* A side file of a tree: path under OUTDIR/<case>/, bytes (NULs allowed). */
struct tree_file {
	const char *path;
	const char *data;
	size_t len;
};
#define TEXT(path_, text_) { path_, text_, sizeof(text_) - 1 }
#define BIN(path_, bytes_) { path_, bytes_, sizeof(bytes_) - 1 }

#define TREE_KVER(c) "1.0.0-" c
#define TREE_MODDIR(c) "lib/modules/" TREE_KVER(c) "/"
/* A module under the module directory of tree c: with MODVERSIONS (__kcrctab, __versions) ... */
#define TMOD(c, path_, name_, ...)                                                             \
	{ .file = TREE_MODDIR(c) path_, .name = name_,                                         \
	  .vermagic = TREE_KVER(c) " SMP preempt mod_unload modversions ", .era = ERA_5_5,     \
	  .arch = &arch_x86_64, .versions = true, __VA_ARGS__ }
/* ... or without (no CRCs anywhere, as Debian's kernels since 6.12 build them). */
#define TMOD_NV(c, path_, name_, ...)                                                          \
	{ .file = TREE_MODDIR(c) path_, .name = name_,                                         \
	  .vermagic = TREE_KVER(c) " SMP preempt mod_unload ", .era = ERA_5_5,                 \
	  .arch = &arch_x86_64, __VA_ARGS__ }

/* The kernel's own symbols every module uses, with their CRCs. */
#define CRC_FENTRY 0x0c0ffee0u
#define CRC_RETURN_THUNK 0x5b8239cau
#define CRC_MODULE_LAYOUT 0x2f5e9c10u
#define UK_FENTRY { "__fentry__", CRC_FENTRY, 0 }
#define UK_THUNK { "__x86_return_thunk", CRC_RETURN_THUNK, 0 }
#define UK_PRINTK { "_printk", CRC_PRINTK, 0 }
#define UK_KFREE { "kfree", CRC_KFREE, 0 }
/* An export with its CRC: plain or GPL. */
#define EX(sym, crc) { sym, K_SYMBOL, NULL, crc }
#define EXG(sym, crc) { sym, K_GPL, NULL, crc }
#define INTREE "retpoline=Y", "intree=Y"

/* chain: a diamond (chain_a uses chain_c then chain_b, both use chain_d; chain_e uses chain_a),
 * a pipeline with a shortcut (pipe5 -> pipe4 -> pipe3 -> pipe2 -> pipe1, pipe5 -> pipe1,
 * pipe3 -> chain_d) and a fan (fan_hub uses fan_x2, fan_x3, fan_x1; fan_top uses fan_hub and
 * fan_x3; fan_x2 uses chain_d), listed in modules.order users before providers and after. */
#define CH(...) TMOD("chain", __VA_ARGS__)
static const struct fixture tree_chain[] = {
	CH("kernel/lib/chain_d.ko", "chain_d",
	   .exports = EXPORTS(EXG("chain_d_get", 0x0d000001u), EXG("chain_d_put", 0x0d000002u)),
	   .undefs = UNDEFS(UK_FENTRY, UK_PRINTK, UK_KFREE, UK_THUNK),
	   .modinfo = STRINGS("description=chain: shared leaf", "depends=", INTREE)),
	CH("kernel/drivers/chain/chain_b.ko", "chain_b",
	   .exports = EXPORTS(EXG("chain_b_open", 0x0b000001u)),
	   .undefs = UNDEFS(UK_FENTRY, { "chain_d_get", 0x0d000001u, 0 }, UK_PRINTK, UK_THUNK),
	   .modinfo = STRINGS("description=chain: left of the diamond", "alias=chain-b-dev",
			      "depends=chain_d", INTREE)),
	CH("kernel/drivers/chain/chain_c.ko", "chain_c",
	   .exports = EXPORTS(EX("chain_c_open", 0x0c000001u)),
	   .undefs = UNDEFS(UK_FENTRY, { "chain_d_put", 0x0d000002u, 0 }, UK_KFREE, UK_THUNK),
	   .modinfo = STRINGS("description=chain: right of the diamond", "depends=chain_d",
			      INTREE)),
	CH("kernel/drivers/chain/chain_a.ko", "chain_a",
	   .exports = EXPORTS(EXG("chain_a_start", 0x0a000001u), EXG("chain_a_stop", 0x0a000002u)),
	   .undefs = UNDEFS(UK_FENTRY, { "chain_c_open", 0x0c000001u, 0 },
			    { "chain_b_open", 0x0b000001u, 0 }, UK_PRINTK, UK_THUNK),
	   .modinfo = STRINGS("description=chain: top of the diamond", "alias=chain-a-dev",
			      "alias=platform:chain-a", "softdep=pre: fan_hub post: pipe5",
			      "weakdep=fan_top", "depends=chain_c,chain_b", INTREE)),
	CH("kernel/drivers/chain/chain_e.ko", "chain_e",
	   .exports = NO_EXPORTS,
	   .undefs = UNDEFS(UK_FENTRY, { "chain_a_start", 0x0a000001u, 0 },
			    { "chain_a_stop", 0x0a000002u, 0 }, UK_THUNK),
	   .modinfo = STRINGS("description=chain: uses the diamond", "depends=chain_a", INTREE)),
	CH("kernel/net/pipe/pipe1.ko", "pipe1",
	   .exports = EXPORTS(EXG("pipe1_fn", 0x71000001u)),
	   .undefs = UNDEFS(UK_FENTRY, UK_PRINTK, UK_THUNK),
	   .modinfo = STRINGS("description=pipeline stage 1", "depends=", INTREE)),
	CH("kernel/net/pipe/pipe2.ko", "pipe2",
	   .exports = EXPORTS(EXG("pipe2_fn", 0x72000001u)),
	   .undefs = UNDEFS(UK_FENTRY, { "pipe1_fn", 0x71000001u, 0 }, UK_THUNK),
	   .modinfo = STRINGS("description=pipeline stage 2", "depends=pipe1", INTREE)),
	CH("kernel/net/pipe/pipe3.ko", "pipe3",
	   .exports = EXPORTS(EXG("pipe3_fn", 0x73000001u)),
	   .undefs = UNDEFS(UK_FENTRY, { "chain_d_get", 0x0d000001u, 0 },
			    { "pipe2_fn", 0x72000001u, 0 }, UK_THUNK),
	   .modinfo = STRINGS("description=pipeline stage 3", "alias=net-pf-99",
			      "depends=chain_d,pipe2", INTREE)),
	CH("kernel/net/pipe/pipe4.ko", "pipe4",
	   .exports = EXPORTS(EXG("pipe4_fn", 0x74000001u)),
	   .undefs = UNDEFS(UK_FENTRY, { "pipe3_fn", 0x73000001u, 0 }, UK_THUNK),
	   .modinfo = STRINGS("description=pipeline stage 4", "depends=pipe3", INTREE)),
	CH("kernel/net/pipe/pipe5.ko", "pipe5",
	   .exports = NO_EXPORTS,
	   .undefs = UNDEFS(UK_FENTRY, { "pipe1_fn", 0x71000001u, 0 },
			    { "pipe4_fn", 0x74000001u, 0 }, UK_PRINTK, UK_THUNK),
	   .modinfo = STRINGS("description=pipeline end, with a shortcut to stage 1",
			      "alias=net-pf-98", "depends=pipe1,pipe4", INTREE)),
	CH("kernel/sound/fan/fan_x1.ko", "fan_x1",
	   .exports = EXPORTS(EX("fan_x1_fn", 0x81000001u)),
	   .undefs = UNDEFS(UK_FENTRY, UK_THUNK),
	   .modinfo = STRINGS("description=fan leaf 1", "depends=", INTREE)),
	CH("kernel/sound/fan/fan_x2.ko", "fan_x2",
	   .exports = EXPORTS(EX("fan_x2_fn", 0x82000001u)),
	   .undefs = UNDEFS(UK_FENTRY, { "chain_d_put", 0x0d000002u, 0 }, UK_THUNK),
	   .modinfo = STRINGS("description=fan leaf 2", "depends=chain_d", INTREE)),
	CH("kernel/sound/fan/fan_x3.ko", "fan_x3",
	   .exports = EXPORTS(EX("fan_x3_fn", 0x83000001u)),
	   .undefs = UNDEFS(UK_FENTRY, UK_PRINTK, UK_THUNK),
	   .modinfo = STRINGS("description=fan leaf 3", "depends=", INTREE)),
	CH("kernel/sound/fan/fan_hub.ko", "fan_hub",
	   .exports = EXPORTS(EXG("fan_hub_fn", 0x84000001u)),
	   .undefs = UNDEFS(UK_FENTRY, { "fan_x2_fn", 0x82000001u, 0 },
			    { "fan_x3_fn", 0x83000001u, 0 }, { "fan_x1_fn", 0x81000001u, 0 },
			    UK_THUNK),
	   .modinfo = STRINGS("description=fan hub", "alias=platform:fan-hub",
			      "alias=of:N*T*Ckmodns,fan-hub", "depends=fan_x2,fan_x3,fan_x1",
			      INTREE)),
	CH("kernel/sound/fan/fan_top.ko", "fan_top",
	   .exports = NO_EXPORTS,
	   .undefs = UNDEFS(UK_FENTRY, { "fan_hub_fn", 0x84000001u, 0 },
			    { "fan_x3_fn", 0x83000001u, 0 }, UK_THUNK),
	   .modinfo = STRINGS("description=fan top", "depends=fan_hub,fan_x3", INTREE)),
};
static const struct tree_file tree_chain_files[] = {
	TEXT(TREE_MODDIR("chain") "modules.order",
	     "kernel/lib/chain_d.ko\n"
	     "kernel/drivers/chain/chain_e.ko\n"
	     "kernel/drivers/chain/chain_a.ko\n"
	     "kernel/drivers/chain/chain_b.ko\n"
	     "kernel/drivers/chain/chain_c.ko\n"
	     "kernel/net/pipe/pipe5.ko\n"
	     "kernel/net/pipe/pipe3.ko\n"
	     "kernel/net/pipe/pipe1.ko\n"
	     "kernel/net/pipe/pipe4.ko\n"
	     "kernel/net/pipe/pipe2.ko\n"
	     "kernel/sound/fan/fan_top.ko\n"
	     "kernel/sound/fan/fan_x3.ko\n"
	     "kernel/sound/fan/fan_hub.ko\n"
	     "kernel/sound/fan/fan_x1.ko\n"
	     "kernel/sound/fan/fan_x2.ko\n"),
};

/* order: xz and zstd modules listed in modules.order without their suffix, one listed twice,
 * a listed module that does not exist, three modules not listed (two out of tree) and a stale
 * copy whose suffix is no module's. */
#define OR(...) TMOD("order", __VA_ARGS__)
static const struct fixture tree_order[] = {
	OR("kernel/drivers/ord/ord_base.ko.xz", "ord_base", .compression = COMP_XZ,
	   .exports = EXPORTS(EXG("ord_base_fn", 0x0b000001u)),
	   .undefs = UNDEFS(UK_FENTRY, UK_PRINTK, UK_THUNK),
	   .modinfo = STRINGS("description=order: base", "alias=ord-base", "depends=", INTREE)),
	OR("kernel/drivers/ord/ord-dash.ko.zst", "ord_dash", .compression = COMP_ZSTD,
	   .exports = EXPORTS(EXG("ord_dash_fn", 0x0da50001u)),
	   .undefs = UNDEFS(UK_FENTRY, { "ord_base_fn", 0x0b000001u, 0 }, UK_THUNK),
	   .modinfo = STRINGS("description=order: a dash in the file name",
			      "alias=platform:ord-dash", "alias=ord-dash-*", "depends=ord_base",
			      INTREE)),
	OR("kernel/drivers/ord/ord_plain.ko", "ord_plain",
	   .exports = NO_EXPORTS,
	   .undefs = UNDEFS(UK_FENTRY, { "ord_dash_fn", 0x0da50001u, 0 }, UK_KFREE, UK_THUNK),
	   .modinfo = STRINGS("description=order: uncompressed", "alias=ord-plain",
			      "depends=ord-dash", INTREE)),
	OR("kernel/fs/ord_fs.ko.zst", "ord_fs", .compression = COMP_ZSTD,
	   .exports = EXPORTS(EXG("ord_fs_fn", 0x0f500001u)),
	   .undefs = UNDEFS(UK_FENTRY, { "ord_base_fn", 0x0b000001u, 0 }, UK_THUNK),
	   .modinfo = STRINGS("description=order: a file system", "alias=fs-ordfs",
			      "softdep=pre: ord_base", "depends=ord_base", INTREE)),
	OR("kernel/fs/ord_twice.ko.xz", "ord_twice", .compression = COMP_XZ,
	   .exports = EXPORTS(EXG("ord_twice_fn", 0x07000001u)),
	   .undefs = UNDEFS(UK_FENTRY, { "ord_fs_fn", 0x0f500001u, 0 }, UK_THUNK),
	   .modinfo = STRINGS("description=order: listed twice", "alias=ord-twice",
			      "depends=ord_fs", INTREE)),
	OR("kernel/misc/ord_unlisted.ko.zst", "ord_unlisted", .compression = COMP_ZSTD,
	   .exports = NO_EXPORTS,
	   .undefs = UNDEFS(UK_FENTRY, { "ord_twice_fn", 0x07000001u, 0 },
			    { "ord_dash_fn", 0x0da50001u, 0 }, UK_THUNK),
	   .modinfo = STRINGS("description=order: not in modules.order", "alias=ord-unlisted",
			      "depends=ord_twice,ord-dash")),
	/* Out-of-tree modules, as DKMS installs them: not in modules.order either. kmod orders
	 * the unlisted by its hash table of module names, where these two come apart from
	 * their paths' order. */
	OR("extra/ord_extra.ko", "ord_extra",
	   .exports = NO_EXPORTS,
	   .undefs = UNDEFS(UK_FENTRY, { "ord_base_fn", 0x0b000001u, 0 }, UK_THUNK),
	   .modinfo = STRINGS("description=order: out of tree, in extra/", "alias=ord-extra",
			      "alias=ord-shared", "depends=ord_base")),
	OR("updates/dkms/ord_dkms.ko.xz", "ord_dkms", .compression = COMP_XZ,
	   .exports = NO_EXPORTS,
	   .undefs = UNDEFS(UK_FENTRY, UK_PRINTK, UK_THUNK),
	   .modinfo = STRINGS("description=order: out of tree, in updates/dkms/",
			      "alias=ord-dkms", "alias=ord-shared", "depends=")),
	/* A backup copy left next to a module: its suffix makes it no module. */
	OR("kernel/drivers/ord/ord_stale.ko.old", "ord_stale",
	   .exports = EXPORTS(EXG("ord_base_fn", 0x0b000002u)),
	   .undefs = UNDEFS(UK_FENTRY, UK_THUNK),
	   .modinfo = STRINGS("description=order: stale copy", "alias=ord-stale", "depends=",
			      INTREE)),
};
static const struct tree_file tree_order_files[] = {
	TEXT(TREE_MODDIR("order") "modules.order",
	     "kernel/fs/ord_twice.ko\n"
	     "kernel/drivers/ord/ord_plain.ko\n"
	     "kernel/drivers/ord/ord-dash.ko\n"
	     "kernel/drivers/ord/ord_gone.ko\n"
	     "kernel/fs/ord_fs.ko\n"
	     "kernel/drivers/ord/ord_base.ko\n"
	     "kernel/fs/ord_twice.ko\n"),
};

/* dups: a kernel without MODVERSIONS (exports read from __ksymtab_strings, some namespaced).
 * dup_first and dup_second both export dup_shared: the later in modules.order, dup_second,
 * owns it; tri_a, tri_b and tri_c all export tri_common, listed b, c, a. dup_first repeats an
 * alias (what -w reports) and shares another with dup_second. */
#define DU(...) TMOD_NV("dups", __VA_ARGS__)
static const struct fixture tree_dups[] = {
	DU("kernel/drivers/dup/dup_first.ko", "dup_first",
	   .exports = EXPORTS({ "dup_shared", K_GPL, NULL, 0 },
			      { "dup_first_only", K_GPL, "DUP_FIRST", 0 }),
	   .undefs = UNDEFS(UK_FENTRY, UK_PRINTK, UK_THUNK),
	   .modinfo = STRINGS("description=dups: first exporter", "alias=dup-dev",
			      "alias=dup-first", "alias=dup-first", "depends=", INTREE)),
	DU("kernel/drivers/dup/dup_user.ko", "dup_user",
	   .exports = NO_EXPORTS,
	   .undefs = UNDEFS(UK_FENTRY, { "dup_shared", 0, 0 }, { "dup_first_only", 0, 0 },
			    UK_THUNK),
	   .modinfo = STRINGS("description=dups: user of the shared symbol",
			      "import_ns=DUP_FIRST", "depends=dup_second,dup_first", INTREE)),
	DU("kernel/drivers/dup/dup_second.ko", "dup_second",
	   .exports = EXPORTS({ "dup_shared", K_SYMBOL, "DUP_SECOND", 0 },
			      { "dup_second_only", K_GPL, NULL, 0 }),
	   .undefs = UNDEFS(UK_FENTRY, UK_KFREE, UK_THUNK),
	   .modinfo = STRINGS("description=dups: second exporter", "alias=dup-dev",
			      "depends=", INTREE)),
	DU("kernel/lib/tri/tri_a.ko", "tri_a",
	   .exports = EXPORTS({ "tri_common", K_GPL, NULL, 0 }, { "tri_a_only", K_GPL, NULL, 0 }),
	   .undefs = UNDEFS(UK_FENTRY, UK_THUNK),
	   .modinfo = STRINGS("description=dups: tri a", "depends=", INTREE)),
	DU("kernel/lib/tri/tri_b.ko", "tri_b",
	   .exports = EXPORTS({ "tri_b_only", K_GPL, NULL, 0 }, { "tri_common", K_GPL, NULL, 0 }),
	   .undefs = UNDEFS(UK_FENTRY, UK_THUNK),
	   .modinfo = STRINGS("description=dups: tri b", "depends=", INTREE)),
	DU("kernel/lib/tri/tri_c.ko", "tri_c",
	   .exports = EXPORTS({ "tri_common", K_SYMBOL, "TRI", 0 }),
	   .undefs = UNDEFS(UK_FENTRY, { "tri_b_only", 0, 0 }, UK_THUNK),
	   .modinfo = STRINGS("description=dups: tri c", "depends=tri_b", INTREE)),
	DU("kernel/lib/tri/tri_user.ko", "tri_user",
	   .exports = NO_EXPORTS,
	   .undefs = UNDEFS(UK_FENTRY, { "tri_common", 0, 0 }, UK_THUNK),
	   .modinfo = STRINGS("description=dups: user of tri_common", "import_ns=TRI",
			      "depends=tri_a", INTREE)),
};
static const struct tree_file tree_dups_files[] = {
	TEXT(TREE_MODDIR("dups") "modules.order",
	     "kernel/drivers/dup/dup_first.ko\n"
	     "kernel/drivers/dup/dup_user.ko\n"
	     "kernel/drivers/dup/dup_second.ko\n"
	     "kernel/lib/tri/tri_user.ko\n"
	     "kernel/lib/tri/tri_b.ko\n"
	     "kernel/lib/tri/tri_c.ko\n"
	     "kernel/lib/tri/tri_a.ko\n"),
};

/* builtin: modules.builtin (with a blank line kmod rejects) and modules.builtin.modinfo with
 * aliases with '-' and [...] brackets, one alias shared by two built-in modules, one module
 * whose records are not contiguous and one unmatched bracket; loadable modules beside them. */
#define BI(...) TMOD("builtin", __VA_ARGS__)
static const struct fixture tree_builtin[] = {
	BI("kernel/drivers/bi/bi_loadable.ko", "bi_loadable",
	   .exports = EXPORTS(EXG("bi_loadable_fn", 0x0b100001u)),
	   .undefs = UNDEFS(UK_FENTRY, { "bi_core_register", 0x0b1c0001u, 0 }, UK_THUNK),
	   .modinfo = STRINGS("description=builtin: a loadable module",
			      "alias=usb:v0BDAp8[12]*d*dc*dsc*dp*ic*isc*ip*in*",
			      "alias=bi-loadable[-_]dev", "alias=platform:bi-loadable",
			      "alias=bi-bad-[alias", "alias=bi-bad]-alias", "alias=shared-alias",
			      "depends=", INTREE)),
	BI("kernel/drivers/bi/bi-user.ko", "bi_user",
	   .exports = NO_EXPORTS,
	   .undefs = UNDEFS(UK_FENTRY, { "bi_loadable_fn", 0x0b100001u, 0 }, UK_THUNK),
	   .modinfo = STRINGS("description=builtin: user", "alias=acpi*:BIUS[0-9A-F][0-9A-F]*:*",
			      "depends=bi_loadable", INTREE)),
};
static const struct tree_file tree_builtin_files[] = {
	TEXT(TREE_MODDIR("builtin") "modules.order",
	     "kernel/drivers/bi/bi_loadable.ko\n"
	     "kernel/drivers/bi/bi-user.ko\n"),
	TEXT(TREE_MODDIR("builtin") "modules.builtin",
	     "kernel/drivers/bi/bi_core.ko\n"
	     "kernel/fs/bifs/bi-fs.ko\n"
	     "kernel/crypto/bi_crypto.ko\n"
	     "kernel/lib/bi_nomodinfo.ko\n"
	     "\n"
	     "kernel/drivers/bi/bi_bad.ko\n"),
	BIN(TREE_MODDIR("builtin") "modules.builtin.modinfo",
	    "bi_core.license=GPL\0"
	    "bi_core.description=builtin: core\0"
	    "bi_core.alias=pci:v00008086d00001234sv*sd*bc*sc*i*\0"
	    "bi_core.alias=bi-core-dev\0"
	    "bi_core.alias=acpi*:BICR[0-9][0-9]*:*\0"
	    "bi_core.parm=debug:enable debug output\0"
	    "bi_core.parmtype=debug:int\0"
	    "bi_fs.alias=fs-bifs\0"
	    "bi_fs.alias=devname:bifs-ctl\0"
	    "bi_fs.alias=char-major-10-250\0"
	    "bi_fs.alias=shared-alias\0"
	    "bi_fs.license=GPL\0"
	    "bi_crypto.alias=crypto-sha999\0"
	    "bi_crypto.alias=sha999\0"
	    "bi_crypto.alias=shared-alias\0"
	    "bi_crypto.alias=crypto-sha999-[generic-x86]\0"
	    "bi_crypto.alias=bi-crypto[-_]v2\0"
	    "bi_crypto.license=GPL\0"
	    "bi_core.alias=bi-core-late\0"
	    "bi_core.alias=bi-core-dev\0"
	    "bi_bad.alias=bi-bad[unmatched\0"
	    "bi_bad.alias=bi-bad-ok\0"
	    "bi_bad.license=GPL\0"
	    "bi_params.parm=level:log level\0"
	    "bi_params.parmtype=level:uint\0"),
};

/* devname: devname: aliases with char-major and block-major aliases in either order, one
 * without major/minor, one with a wildcard minor, several of each, and majors without devname. */
#define DN(...) TMOD("devname", __VA_ARGS__)
#define DN_UNDEFS UNDEFS(UK_FENTRY, UK_PRINTK, UK_THUNK)
static const struct fixture tree_devname[] = {
	DN("kernel/fs/fuse/dn_fuse.ko", "dn_fuse", .exports = NO_EXPORTS, .undefs = DN_UNDEFS,
	   .modinfo = STRINGS("description=devname: like fuse", "alias=devname:fuse",
			      "alias=char-major-10-229", "alias=fs-fuseblk", "alias=fs-fuse",
			      "depends=", INTREE)),
	DN("kernel/drivers/block/dn_loop.ko", "dn_loop", .exports = NO_EXPORTS,
	   .undefs = DN_UNDEFS,
	   .modinfo = STRINGS("description=devname: like loop", "alias=devname:loop-control",
			      "alias=char-major-10-237", "alias=block-major-7-*", "depends=",
			      INTREE)),
	DN("kernel/drivers/block/dn-blk.ko", "dn_blk", .exports = NO_EXPORTS, .undefs = DN_UNDEFS,
	   .modinfo = STRINGS("description=devname: a block device", "alias=block-major-240-3",
			      "alias=devname:dnblk0", "depends=", INTREE)),
	DN("kernel/drivers/dn/dn_nomajor.ko", "dn_nomajor", .exports = NO_EXPORTS,
	   .undefs = DN_UNDEFS,
	   .modinfo = STRINGS("description=devname: no major", "alias=devname:nomajor",
			      "depends=", INTREE)),
	DN("kernel/drivers/dn/dn_multi.ko", "dn_multi", .exports = NO_EXPORTS,
	   .undefs = DN_UNDEFS,
	   .modinfo = STRINGS("description=devname: two of each", "alias=char-major-1-2",
			      "alias=char-major-3-4", "alias=devname:first",
			      "alias=devname:second", "alias=char-major-5-6", "depends=", INTREE)),
	DN("kernel/drivers/dn/dn_mixed.ko", "dn_mixed", .exports = NO_EXPORTS,
	   .undefs = DN_UNDEFS,
	   .modinfo = STRINGS("description=devname: char then block", "alias=char-major-10-240",
			      "alias=block-major-11-0", "alias=devname:mixed",
			      "alias=char-major-10-241", "depends=", INTREE)),
	DN("kernel/sound/core/dn_timer.ko", "dn_timer", .exports = NO_EXPORTS,
	   .undefs = DN_UNDEFS,
	   .modinfo = STRINGS("description=devname: a subdirectory", "alias=devname:snd/timer",
			      "alias=char-major-116-33", "depends=", INTREE)),
	DN("kernel/drivers/dn/dn_majoronly.ko", "dn_majoronly", .exports = NO_EXPORTS,
	   .undefs = DN_UNDEFS,
	   .modinfo = STRINGS("description=devname: a major, no devname",
			      "alias=char-major-99-1", "depends=", INTREE)),
	DN("kernel/drivers/dn/dn_wild.ko", "dn_wild", .exports = NO_EXPORTS, .undefs = DN_UNDEFS,
	   .modinfo = STRINGS("description=devname: wildcard minor", "alias=devname:wild",
			      "alias=char-major-81-*", "depends=", INTREE)),
};
static const struct tree_file tree_devname_files[] = {
	TEXT(TREE_MODDIR("devname") "modules.order",
	     "kernel/fs/fuse/dn_fuse.ko\n"
	     "kernel/drivers/block/dn_loop.ko\n"
	     "kernel/drivers/block/dn-blk.ko\n"
	     "kernel/drivers/dn/dn_nomajor.ko\n"
	     "kernel/drivers/dn/dn_multi.ko\n"
	     "kernel/drivers/dn/dn_mixed.ko\n"
	     "kernel/sound/core/dn_timer.ko\n"
	     "kernel/drivers/dn/dn_majoronly.ko\n"
	     "kernel/drivers/dn/dn_wild.ko\n"),
};

/* cycle: cy_x uses cy_y and cy_w, cy_y uses cy_x, cy_z uses cy_x; cy_p -> cy_q -> cy_r -> cy_p;
 * cy_w, used by a cycle, is in none; cy_free uses nothing. Nothing outside a cycle that a cycle
 * uses may lead into a cycle (say cy_x -> cy_v -> cy_q): kmod 30's cycle report then grows its
 * path until memory runs out ("No memory to report cycles" under a limit, else killed). */
#define CY(...) TMOD("cycle", __VA_ARGS__)
static const struct fixture tree_cycle[] = {
	CY("kernel/drivers/cy/cy_x.ko", "cy_x", .exports = EXPORTS(EXG("cy_x_fn", 0xc1000001u)),
	   .undefs = UNDEFS(UK_FENTRY, { "cy_y_fn", 0xc2000001u, 0 },
			    { "cy_w_fn", 0xc4000001u, 0 }, UK_THUNK),
	   .modinfo = STRINGS("description=cycle: x", "depends=cy_y,cy_w", INTREE)),
	CY("kernel/drivers/cy/cy_y.ko", "cy_y", .exports = EXPORTS(EXG("cy_y_fn", 0xc2000001u)),
	   .undefs = UNDEFS(UK_FENTRY, { "cy_x_fn", 0xc1000001u, 0 }, UK_THUNK),
	   .modinfo = STRINGS("description=cycle: y", "depends=cy_x", INTREE)),
	CY("kernel/drivers/cy/cy_z.ko", "cy_z", .exports = NO_EXPORTS,
	   .undefs = UNDEFS(UK_FENTRY, { "cy_x_fn", 0xc1000001u, 0 }, UK_THUNK),
	   .modinfo = STRINGS("description=cycle: z uses x", "depends=cy_x", INTREE)),
	CY("kernel/drivers/cy/cy_w.ko", "cy_w", .exports = EXPORTS(EXG("cy_w_fn", 0xc4000001u)),
	   .undefs = UNDEFS(UK_FENTRY, UK_PRINTK, UK_THUNK),
	   .modinfo = STRINGS("description=cycle: w, used by x", "depends=", INTREE)),
	CY("kernel/net/cy/cy_p.ko", "cy_p", .exports = EXPORTS(EXG("cy_p_fn", 0xc5000001u)),
	   .undefs = UNDEFS(UK_FENTRY, { "cy_q_fn", 0xc6000001u, 0 }, UK_THUNK),
	   .modinfo = STRINGS("description=cycle: p", "depends=cy_q", INTREE)),
	CY("kernel/net/cy/cy_q.ko", "cy_q", .exports = EXPORTS(EXG("cy_q_fn", 0xc6000001u)),
	   .undefs = UNDEFS(UK_FENTRY, { "cy_r_fn", 0xc7000001u, 0 }, UK_THUNK),
	   .modinfo = STRINGS("description=cycle: q", "depends=cy_r", INTREE)),
	CY("kernel/net/cy/cy_r.ko", "cy_r", .exports = EXPORTS(EXG("cy_r_fn", 0xc7000001u)),
	   .undefs = UNDEFS(UK_FENTRY, { "cy_p_fn", 0xc5000001u, 0 }, UK_THUNK),
	   .modinfo = STRINGS("description=cycle: r", "depends=cy_p", INTREE)),
	CY("kernel/lib/cy_free.ko", "cy_free", .exports = EXPORTS(EXG("cy_free_fn", 0xc8000001u)),
	   .undefs = UNDEFS(UK_FENTRY, UK_PRINTK, UK_THUNK),
	   .modinfo = STRINGS("description=cycle: in none", "depends=", INTREE)),
};
static const struct tree_file tree_cycle_files[] = {
	/* Each cycle is reported from its first module in modules.order: cy_r, cy_y. */
	TEXT(TREE_MODDIR("cycle") "modules.order",
	     "kernel/net/cy/cy_r.ko\n"
	     "kernel/drivers/cy/cy_y.ko\n"
	     "kernel/drivers/cy/cy_z.ko\n"
	     "kernel/drivers/cy/cy_x.ko\n"
	     "kernel/drivers/cy/cy_w.ko\n"
	     "kernel/net/cy/cy_p.ko\n"
	     "kernel/net/cy/cy_q.ko\n"
	     "kernel/lib/cy_free.ko\n"),
};

/* cycles: several cycles at once, the report's order at stake. rg_d <-> rg_e; rg_a -> rg_b ->
 * rg_c -> rg_a, with rg_a and rg_b also using rg_f and rg_g, which use nothing; rg_i -> rg_j,
 * rg_j uses rg_h and rg_k, rg_k uses rg_h, rg_h uses rg_i: two ways round from rg_i. kmod walks
 * from the first unplaced module in module order, but its list of starts turns: after a cycle
 * is reported the next start is the one after the last module struck off, so the 3-cycle is
 * reported from rg_c, not rg_b. Undefined symbols in the order that decides the walk. */
#define RG(...) TMOD("cycles", __VA_ARGS__)
static const struct fixture tree_cycles[] = {
	RG("kernel/drivers/rg/rg_d.ko", "rg_d", .exports = EXPORTS(EXG("rg_d_fn", 0xd1000001u)),
	   .undefs = UNDEFS(UK_FENTRY, { "rg_e_fn", 0xd1090001u, 0 }, UK_THUNK),
	   .modinfo = STRINGS("description=cycles: rg_d", "depends=rg_e", INTREE)),
	RG("kernel/drivers/rg/rg_i.ko", "rg_i", .exports = EXPORTS(EXG("rg_i_fn", 0xd1010001u)),
	   .undefs = UNDEFS(UK_FENTRY, { "rg_j_fn", 0xd1050001u, 0 }, UK_THUNK),
	   .modinfo = STRINGS("description=cycles: rg_i", "depends=rg_j", INTREE)),
	RG("kernel/drivers/rg/rg_b.ko", "rg_b", .exports = EXPORTS(EXG("rg_b_fn", 0xd1020001u)),
	   .undefs = UNDEFS(UK_FENTRY, { "rg_f_fn", 0xd1060001u, 0 }, { "rg_c_fn", 0xd1070001u, 0 }, { "rg_g_fn", 0xd10a0001u, 0 }, UK_THUNK),
	   .modinfo = STRINGS("description=cycles: rg_b", "depends=rg_f,rg_c,rg_g", INTREE)),
	RG("kernel/drivers/rg/rg_a.ko", "rg_a", .exports = EXPORTS(EXG("rg_a_fn", 0xd1030001u)),
	   .undefs = UNDEFS(UK_FENTRY, { "rg_f_fn", 0xd1060001u, 0 }, { "rg_g_fn", 0xd10a0001u, 0 }, { "rg_b_fn", 0xd1020001u, 0 }, UK_THUNK),
	   .modinfo = STRINGS("description=cycles: rg_a", "depends=rg_f,rg_g,rg_b", INTREE)),
	RG("kernel/drivers/rg/rg_h.ko", "rg_h", .exports = EXPORTS(EXG("rg_h_fn", 0xd1040001u)),
	   .undefs = UNDEFS(UK_FENTRY, { "rg_i_fn", 0xd1010001u, 0 }, UK_THUNK),
	   .modinfo = STRINGS("description=cycles: rg_h", "depends=rg_i", INTREE)),
	RG("kernel/drivers/rg/rg_j.ko", "rg_j", .exports = EXPORTS(EXG("rg_j_fn", 0xd1050001u)),
	   .undefs = UNDEFS(UK_FENTRY, { "rg_h_fn", 0xd1040001u, 0 }, { "rg_k_fn", 0xd1080001u, 0 }, UK_THUNK),
	   .modinfo = STRINGS("description=cycles: rg_j", "depends=rg_h,rg_k", INTREE)),
	RG("kernel/lib/rg_f.ko", "rg_f", .exports = EXPORTS(EXG("rg_f_fn", 0xd1060001u)),
	   .undefs = UNDEFS(UK_FENTRY, UK_PRINTK, UK_THUNK),
	   .modinfo = STRINGS("description=cycles: rg_f", "depends=", INTREE)),
	RG("kernel/drivers/rg/rg_c.ko", "rg_c", .exports = EXPORTS(EXG("rg_c_fn", 0xd1070001u)),
	   .undefs = UNDEFS(UK_FENTRY, { "rg_a_fn", 0xd1030001u, 0 }, UK_THUNK),
	   .modinfo = STRINGS("description=cycles: rg_c", "depends=rg_a", INTREE)),
	RG("kernel/drivers/rg/rg_k.ko", "rg_k", .exports = EXPORTS(EXG("rg_k_fn", 0xd1080001u)),
	   .undefs = UNDEFS(UK_FENTRY, { "rg_h_fn", 0xd1040001u, 0 }, UK_THUNK),
	   .modinfo = STRINGS("description=cycles: rg_k", "depends=rg_h", INTREE)),
	RG("kernel/drivers/rg/rg_e.ko", "rg_e", .exports = EXPORTS(EXG("rg_e_fn", 0xd1090001u)),
	   .undefs = UNDEFS(UK_FENTRY, { "rg_d_fn", 0xd1000001u, 0 }, UK_THUNK),
	   .modinfo = STRINGS("description=cycles: rg_e", "depends=rg_d", INTREE)),
	RG("kernel/lib/rg_g.ko", "rg_g", .exports = EXPORTS(EXG("rg_g_fn", 0xd10a0001u)),
	   .undefs = UNDEFS(UK_FENTRY, UK_PRINTK, UK_THUNK),
	   .modinfo = STRINGS("description=cycles: rg_g", "depends=", INTREE)),
};
static const struct tree_file tree_cycles_files[] = {
	TEXT(TREE_MODDIR("cycles") "modules.order",
	     "kernel/drivers/rg/rg_d.ko\n"
	     "kernel/drivers/rg/rg_i.ko\n"
	     "kernel/drivers/rg/rg_b.ko\n"
	     "kernel/drivers/rg/rg_a.ko\n"
	     "kernel/drivers/rg/rg_h.ko\n"
	     "kernel/drivers/rg/rg_j.ko\n"
	     "kernel/lib/rg_f.ko\n"
	     "kernel/drivers/rg/rg_c.ko\n"
	     "kernel/drivers/rg/rg_k.ko\n"
	     "kernel/drivers/rg/rg_e.ko\n"
	     "kernel/lib/rg_g.ko\n"),
};

/* weak: weak undefined symbols exported by a module and by nobody; unknown symbols; __versions
 * entries without a symbol (like module_layout) naming a kernel symbol, a module's export and
 * nothing at all. System.map (for -F) has the kernel's symbols. */
#define WK(...) TMOD("weak", __VA_ARGS__)
static const struct fixture tree_weak[] = {
	WK("kernel/drivers/wk/wk_opt_user.ko", "wk_opt_user", .exports = NO_EXPORTS,
	   .undefs = UNDEFS(UK_FENTRY, { "wk_opt_fn", 0xe1000001u, U_WEAK }, UK_PRINTK),
	   .modinfo = STRINGS("description=weak: only a weak use of wk_opt_fn", "depends=",
			      INTREE)),
	WK("kernel/drivers/wk/wk_provider.ko", "wk_provider",
	   .exports = EXPORTS(EXG("wk_opt_fn", 0xe1000001u), EXG("wk_hard_fn", 0xe1000002u)),
	   .undefs = UNDEFS(UK_FENTRY, UK_PRINTK),
	   .modinfo = STRINGS("description=weak: provider", "depends=", INTREE)),
	WK("kernel/drivers/wk/wk_mixed.ko", "wk_mixed", .exports = NO_EXPORTS,
	   .undefs = UNDEFS(UK_FENTRY, { "wk_hard_fn", 0xe1000002u, 0 },
			    { "wk_absent", 0xe1000003u, U_WEAK }, UK_PRINTK),
	   .modinfo = STRINGS("description=weak: a hard use and a weak unknown one",
			      "depends=wk_provider", INTREE)),
	WK("kernel/drivers/wk/wk_unknown.ko", "wk_unknown", .exports = NO_EXPORTS,
	   .undefs = UNDEFS(UK_FENTRY, { "wk_not_exported", 0xe1000004u, 0 }, UK_KFREE,
			    { "wk_also_missing", 0xe1000005u, 0 }),
	   .modinfo = STRINGS("description=weak: unknown symbols", "depends=", INTREE)),
	WK("kernel/drivers/wk/wk_vonly.ko", "wk_vonly", .exports = NO_EXPORTS,
	   .undefs = UNDEFS({ "module_layout", CRC_MODULE_LAYOUT, U_NOSYM },
			    { "wk_vonly_target", 0xe1000006u, U_NOSYM },
			    { "wk_vonly_ghost", 0xe1000007u, U_NOSYM }, UK_FENTRY, UK_PRINTK),
	   .modinfo = STRINGS("description=weak: __versions entries without symbols",
			      "depends=", INTREE)),
	WK("kernel/drivers/wk/wk_target.ko", "wk_target",
	   .exports = EXPORTS(EXG("wk_vonly_target", 0xe1000006u)),
	   .undefs = UNDEFS(UK_FENTRY, UK_KFREE),
	   .modinfo = STRINGS("description=weak: named only in another's __versions", "depends=",
			      INTREE)),
};
static const struct tree_file tree_weak_files[] = {
	TEXT(TREE_MODDIR("weak") "modules.order",
	     "kernel/drivers/wk/wk_opt_user.ko\n"
	     "kernel/drivers/wk/wk_provider.ko\n"
	     "kernel/drivers/wk/wk_mixed.ko\n"
	     "kernel/drivers/wk/wk_unknown.ko\n"
	     "kernel/drivers/wk/wk_vonly.ko\n"
	     "kernel/drivers/wk/wk_target.ko\n"),
	TEXT("System.map",
	     "0000000000000000 A __per_cpu_start\n"
	     "ffffffff81000000 T _stext\n"
	     "ffffffff81001000 T _printk\n"
	     "ffffffff81002000 T kfree\n"
	     "ffffffff81003000 T __fentry__\n"
	     "ffffffff81004000 T module_layout\n"
	     "ffffffff82600000 R __start___ksymtab\n"
	     "ffffffff82600010 r __ksymtab__printk\n"
	     "ffffffff82600020 r __ksymtab___fentry__\n"
	     "ffffffff82600030 r __ksymtab_module_layout\n"
	     "ffffffff82600040 r __ksymtab_kfree\n"
	     "ffffffff82700000 r __kstrtab__printk\n"
	     "ffffffff82700010 r __kstrtabns__printk\n"
	     "ffffffff82800000 D __stop___ksymtab_gpl\n"),
};

/* config: the same module in kernel/, updates/, extra/ and an external directory, chosen by
 * search, override and external lines; excluded and build/ directories; a bad line. The users
 * module depends on each, so modules.dep and modules.symbols show who won. */
#define CF(...) TMOD("config", __VA_ARGS__)
#define CF_UNDEFS UNDEFS(UK_FENTRY, UK_PRINTK, UK_THUNK)
/* One copy of module n in directory d, exporting n_fn and n_<where>. */
#define CF_COPY(d, n, where, crc)                                                              \
	CF(d "/" n ".ko", n, .exports = EXPORTS(EXG(n "_fn", crc), EXG(n "_" where, crc + 1)),  \
	   .undefs = CF_UNDEFS, .modinfo = STRINGS("description=config: " n " in " d, "depends="))
static const struct fixture tree_config[] = {
	CF("kernel/drivers/cf/cf_users.ko", "cf_users", .exports = NO_EXPORTS,
	   .undefs = UNDEFS(UK_FENTRY, { "cf_all_fn", 0xcf010000u, 0 },
			    { "cf_upd_fn", 0xcf020000u, 0 }, { "cf_over_fn", 0xcf030000u, 0 },
			    { "cf_over_nomatch_fn", 0xcf040000u, 0 },
			    { "cf_over_any_fn", 0xcf050000u, 0 }, { "cf_ext_fn", 0xcf060000u, 0 },
			    { "cf_stag_fn", 0xcf070000u, 0 }, { "cf_inbuild_fn", 0xcf080000u, 0 },
			    UK_THUNK),
	   .modinfo = STRINGS("description=config: uses every contested module",
			      "depends=cf_all,cf_upd,cf_over,cf_over_nomatch,cf_over_any,cf_ext",
			      INTREE)),
	CF_COPY("kernel/drivers/cf", "cf_all", "kernel", 0xcf010000u),
	CF_COPY("updates", "cf_all", "updates", 0xcf010000u),
	CF_COPY("extra", "cf_all", "extra", 0xcf010000u),
	CF_COPY("kernel/drivers/cf", "cf_upd", "kernel", 0xcf020000u),
	CF("updates/drivers/cf/cf_upd.ko.xz", "cf_upd", .compression = COMP_XZ,
	   .exports = EXPORTS(EXG("cf_upd_fn", 0xcf020000u), EXG("cf_upd_updates", 0xcf020001u)),
	   .undefs = CF_UNDEFS, .modinfo = STRINGS("description=config: cf_upd in updates/drivers")),
	CF_COPY("kernel/drivers/cf", "cf_over", "kernel", 0xcf030000u),
	CF_COPY("updates", "cf_over", "updates", 0xcf030000u),
	CF_COPY("extra", "cf_over", "extra", 0xcf030000u),
	CF_COPY("kernel/drivers/cf", "cf_over_nomatch", "kernel", 0xcf040000u),
	CF_COPY("updates", "cf_over_nomatch", "updates", 0xcf040000u),
	CF_COPY("extra", "cf_over_nomatch", "extra", 0xcf040000u),
	CF_COPY("kernel/drivers/cf", "cf_over_any", "kernel", 0xcf050000u),
	CF_COPY("updates", "cf_over_any", "updates", 0xcf050000u),
	CF_COPY("kernel/drivers/cf", "cf_ext", "kernel", 0xcf060000u),
	{ .file = "ext-modules/cf_ext.ko", .name = "cf_ext",
	  .vermagic = TREE_KVER("config") " SMP preempt mod_unload modversions ",
	  .era = ERA_5_5, .arch = &arch_x86_64, .versions = true,
	  .exports = EXPORTS(EXG("cf_ext_fn", 0xcf060000u), EXG("cf_ext_external", 0xcf060001u)),
	  .undefs = CF_UNDEFS, .modinfo = STRINGS("description=config: cf_ext, external") },
	/* named second on an external line: kmod 30 takes one directory a line, so never used */
	{ .file = "ext-modules2/cf_ext.ko", .name = "cf_ext",
	  .vermagic = TREE_KVER("config") " SMP preempt mod_unload modversions ",
	  .era = ERA_5_5, .arch = &arch_x86_64, .versions = true,
	  .exports = EXPORTS(EXG("cf_ext_fn", 0xcf060000u), EXG("cf_ext_second", 0xcf060002u)),
	  .undefs = CF_UNDEFS, .modinfo = STRINGS("description=config: cf_ext, second external") },
	/* override lines name it by its file name: cf-dash, not cf_dash */
	CF("kernel/drivers/cf/cf-dash.ko", "cf_dash",
	   .exports = EXPORTS(EXG("cf_dash_fn", 0xcf090000u), EXG("cf_dash_kernel", 0xcf090001u)),
	   .undefs = CF_UNDEFS, .modinfo = STRINGS("description=config: cf-dash in kernel")),
	CF("extra/cf-dash.ko", "cf_dash",
	   .exports = EXPORTS(EXG("cf_dash_fn", 0xcf090000u), EXG("cf_dash_extra", 0xcf090001u)),
	   .undefs = CF_UNDEFS, .modinfo = STRINGS("description=config: cf-dash in extra")),
	CF_COPY("kernel/drivers/staging/cf_stag", "cf_stag", "staging", 0xcf070000u),
	CF_COPY("kernel/drivers/cf/build", "cf_inbuild", "build", 0xcf080000u),
};
static const struct tree_file tree_config_files[] = {
	TEXT(TREE_MODDIR("config") "modules.order",
	     "kernel/drivers/cf/cf_users.ko\n"
	     "kernel/drivers/cf/cf_all.ko\n"
	     "updates/cf_all.ko\n"
	     "extra/cf_all.ko\n"
	     "kernel/drivers/cf/cf_upd.ko\n"
	     "updates/drivers/cf/cf_upd.ko\n"
	     "kernel/drivers/cf/cf_over.ko\n"
	     "updates/cf_over.ko\n"
	     "extra/cf_over.ko\n"
	     "kernel/drivers/cf/cf_over_nomatch.ko\n"
	     "updates/cf_over_nomatch.ko\n"
	     "extra/cf_over_nomatch.ko\n"
	     "kernel/drivers/cf/cf_over_any.ko\n"
	     "updates/cf_over_any.ko\n"
	     "kernel/drivers/cf/cf_ext.ko\n"
	     "kernel/drivers/staging/cf_stag/cf_stag.ko\n"
	     "kernel/drivers/cf/build/cf_inbuild.ko\n"
	     "kernel/drivers/cf/cf-dash.ko\n"
	     "extra/cf-dash.ko\n"),
	TEXT("depmod.conf",
	     "# kmodns fixture: updates/ first, then the kernel's own directories\n"
	     "search updates built-in\n"
	     "\n"
	     "override cf_over " TREE_KVER("config") " extra\n"
	     "override cf_over_nomatch 9.9.9-other extra\n"
	     "override cf_over_any * kernel/drivers/cf\n"
	     "exclude staging\n"
	     "external " TREE_KVER("config") " @CASEDIR@/ext-modules\n"
	     "frobnicate all modules\n"),
	TEXT("depmod-ext.conf",
	     "# kmodns fixture: the external directory before the kernel's own\n"
	     "search updates external built-in\n"
	     "override cf_over " TREE_KVER("config") " extra\n"
	     "override cf_over_nomatch 9.9.9-other extra\n"
	     "override cf_over_any * kernel/drivers/cf\n"
	     "exclude staging\n"
	     "external " TREE_KVER("config") " @CASEDIR@/ext-modules\n"),
	/* kmod 30's parsing: versions as extended regular expressions found anywhere in the
	 * version ("*" alone: any), one directory an external line, words past a command's
	 * ignored, every exclude word, '\' joining lines, '#' a comment only first on a line,
	 * include and make_map_files accepted silently, and the bad lines it reports */
	TEXT("depmod-cfg.conf",
	     "search \\\n"
	     "  updates external built-in # a comment here is two more search words\n"
	     "override cf_over ^1(\\.0){1,2}\\.0-c[[:alpha:]]+n extra and more words\n"
	     "override cf_over_nomatch ^config extra\n"
	     "override cf_over_any [unclosed kernel/drivers/cf\n"
	     "external (^|-)conf.g$ @CASEDIR@/ext-modules @CASEDIR@/ext-modules2\n"
	     "exclude staging build-not-here\n"
	     "exclude\n"
	     "include /etc/depmod.d/other.conf\n"
	     "make_map_files\n"
	     "  # only a comment when '#' comes first\n"
	     "#a comment \\\n"
	     "continued, so not a bad line\n"
	     "override cf_upd 1.0.0-config\n"
	     "external 1.0.0-config\n"
	     "bad\\ line\\\\\n"),
	/* ranks without "built-in": a module no word names loses to one named; a tie keeps the
	 * first found; search lines add up; an override names a module by its file name */
	TEXT("depmod-rank.conf",
	     "search extra\n"
	     "search external updates/drivers\n"
	     "external * @CASEDIR@/ext-modules\n"
	     "override cf-dash * kernel/drivers/cf\n"
	     "override cf_dash * extra\n"),
	/* -C DIR: *.conf files sorted by name across the -C paths, the first of a name winning;
	 * no dot files, no other names, no directories; a file named by -C is read whatever its
	 * name */
	TEXT("depmod.d/b-search.conf", "search extra updates built-in\n"),
	TEXT("depmod.d/.hidden.conf", "never read\n"),
	TEXT("depmod.d/notes.txt", "never read\n"),
	TEXT("depmod.d/sub.conf/inside.conf", "never read\n"),
	TEXT("depmod.d2/b-search.conf", "never read: depmod.d has b-search.conf\n"),
	TEXT("depmod.d2/a-override.conf", "override cf_over * kernel/drivers/cf\nbad a-override\n"),
	TEXT("depmod.d2/c-external.conf", "external 1.0 @CASEDIR@/ext-modules\nbad c-external\n"),
	TEXT("single-file", "override cf_upd * kernel/drivers/cf\nbad single-file\n"),
};

/* crc: Module.symvers (for -E) whose vmlinux rows agree or not with the modules' __versions,
 * a vmlinux symbol a module exports too, a module row, an old 4-column row; modules without
 * __versions, without a CRC for one symbol, with weak uses, and an exporter without CRCs. */
#define CR(...) TMOD("crc", __VA_ARGS__)
static const struct fixture tree_crc[] = {
	CR("kernel/drivers/crc/crc_core.ko", "crc_core",
	   .exports = EXPORTS(EXG("crc_core_fn", 0x12345678u), EX("crc_shadowed", 0x7777777au)),
	   .undefs = UNDEFS(UK_FENTRY, UK_PRINTK, UK_KFREE, UK_THUNK),
	   .modinfo = STRINGS("description=crc: exporter", "depends=", INTREE)),
	CR("kernel/drivers/crc/crc_user.ko", "crc_user", .exports = NO_EXPORTS,
	   .undefs = UNDEFS(UK_FENTRY, { "crc_core_fn", 0x12345679u, 0 },
			    { "kfree", CRC_KFREE + 1, 0 }, UK_PRINTK,
			    { "crc_shadowed", 0x77777777u, 0 }, { "dma_buf_get", CRC_DMA_BUF_GET, 0 },
			    { "crc_old_fmt", 0xdeadbeefu, 0 }, { "crc_plain_fn", 0x0badc0deu, 0 },
			    { "crc_nowhere", 0x00000001u, 0 }, UK_THUNK),
	   .modinfo = STRINGS("description=crc: user, right and wrong versions",
			      "import_ns=DMA_BUF", "depends=crc_core,crc_plain", INTREE)),
	CR("kernel/drivers/crc/crc_weak.ko", "crc_weak", .exports = NO_EXPORTS,
	   .undefs = UNDEFS(UK_FENTRY, { "kfree", 0x99999999u, U_WEAK },
			    { "crc_core_fn", 0x00000001u, U_WEAK }, UK_PRINTK, UK_THUNK),
	   .modinfo = STRINGS("description=crc: weak uses with wrong versions",
			      "depends=crc_core", INTREE)),
	CR("kernel/drivers/crc/crc_nocrc.ko", "crc_nocrc", .exports = NO_EXPORTS,
	   .undefs = UNDEFS(UK_FENTRY, { "kfree", 0, U_NOCRC }, { "crc_core_fn", 0, U_NOCRC },
			    UK_PRINTK, UK_THUNK),
	   .modinfo = STRINGS("description=crc: two symbols missing from __versions",
			      "depends=crc_core", INTREE)),
	CR("kernel/drivers/crc/crc_layout.ko", "crc_layout", .exports = NO_EXPORTS,
	   .undefs = UNDEFS({ "module_layout", CRC_MODULE_LAYOUT, U_NOSYM },
			    { "kfree", CRC_KFREE + 2, U_NOSYM },
			    { "crc_core_fn", 0x1234567au, U_NOSYM }, UK_FENTRY,
			    { "_printk", CRC_PRINTK + 3, 0 }),
	   .modinfo = STRINGS("description=crc: __versions entries without symbols", "depends=",
			      INTREE)),
	TMOD_NV("crc", "kernel/drivers/crc/crc_nover.ko", "crc_nover", .exports = NO_EXPORTS,
		.undefs = UNDEFS(UK_FENTRY, UK_PRINTK, { "crc_core_fn", 0, 0 }, UK_THUNK),
		.modinfo = STRINGS("description=crc: built without MODVERSIONS",
				   "depends=crc_core", INTREE)),
	TMOD_NV("crc", "kernel/drivers/crc/crc_plain.ko", "crc_plain",
		.exports = EXPORTS({ "crc_plain_fn", K_GPL, NULL, 0 }),
		.undefs = UNDEFS(UK_FENTRY, UK_PRINTK, UK_THUNK),
		.modinfo = STRINGS("description=crc: an exporter without CRCs", "depends=",
				   INTREE)),
};
#define SYMVERS_ROW(crc, sym, where, kind, ns) crc "\t" sym "\t" where "\t" kind "\t" ns "\n"
static const struct tree_file tree_crc_files[] = {
	TEXT(TREE_MODDIR("crc") "modules.order",
	     "kernel/drivers/crc/crc_core.ko\n"
	     "kernel/drivers/crc/crc_user.ko\n"
	     "kernel/drivers/crc/crc_weak.ko\n"
	     "kernel/drivers/crc/crc_nocrc.ko\n"
	     "kernel/drivers/crc/crc_layout.ko\n"
	     "kernel/drivers/crc/crc_nover.ko\n"
	     "kernel/drivers/crc/crc_plain.ko\n"),
	TEXT("Module.symvers",
	     SYMVERS_ROW("0x1f2e3d4c", "_printk", "vmlinux", "EXPORT_SYMBOL", "")
	     SYMVERS_ROW("0x2b3c4d5e", "kfree", "vmlinux", "EXPORT_SYMBOL", "")
	     SYMVERS_ROW("0x3c4d5e6f", "dma_buf_get", "vmlinux", "EXPORT_SYMBOL_GPL", "DMA_BUF")
	     SYMVERS_ROW("0x77777777", "crc_shadowed", "vmlinux", "EXPORT_SYMBOL", "")
	     SYMVERS_ROW("0x0c0ffee0", "__fentry__", "vmlinux", "EXPORT_SYMBOL", "")
	     SYMVERS_ROW("0x5b8239ca", "__x86_return_thunk", "vmlinux", "EXPORT_SYMBOL", "")
	     SYMVERS_ROW("0x12345678", "crc_core_fn", "drivers/crc/crc_core", "EXPORT_SYMBOL_GPL", "")
	     "0xdeadbeef\tcrc_old_fmt\tvmlinux\tEXPORT_SYMBOL\n"),
};

/* nsimport: explicit imports of "module:" namespaces, which kernels 6.16 and later refuse
 * (EPERM) and older ones take as ordinary namespaces; the same namespace's symbols used through
 * its patterns, which only 6.16 and later honour. The vermagic says the kernel: 6.16, 6.15, 7.2. */
#define NSI(path_, name_, kver_, ...)                                                          \
	{ .file = TREE_MODDIR("nsimport") "kernel/drivers/nsi/" path_, .name = name_,         \
	  .vermagic = kver_ " SMP preempt mod_unload modversions ", .era = ERA_5_5,            \
	  .arch = &arch_x86_64, .versions = true, __VA_ARGS__ }
#define NSI_FRIENDS "module:nsi_friend,nsi_user*"
#define CRC_NSI_CORE_FN 0x45a10001u
#define CRC_NSI_FRIENDS_FN 0x45a10002u
#define UK_NSI_FRIENDS { "nsi_friends_fn", CRC_NSI_FRIENDS_FN, 0 }
static const struct fixture tree_nsimport[] = {
	NSI("nsi_core.ko", "nsi_core", "6.16.0",
	    .exports = EXPORTS({ "nsi_core_fn", K_GPL, "NSI_CORE", CRC_NSI_CORE_FN },
			       { "nsi_friends_fn", K_GPL, NSI_FRIENDS, CRC_NSI_FRIENDS_FN }),
	    .undefs = UNDEFS(UK_FENTRY, UK_PRINTK, UK_THUNK),
	    .modinfo = STRINGS("description=nsimport: a namespace and a module: namespace", "depends=",
			       INTREE)),
	NSI("nsi_friend.ko", "nsi_friend", "6.16.0", .exports = NO_EXPORTS,
	    .undefs = UNDEFS(UK_FENTRY, UK_NSI_FRIENDS, UK_PRINTK),
	    .modinfo = STRINGS("description=nsimport: named by the patterns, no import",
			       "depends=nsi_core", INTREE)),
	NSI("nsi_bad.ko", "nsi_bad", "6.16.0", .exports = NO_EXPORTS,
	    .undefs = UNDEFS(UK_FENTRY, { "nsi_core_fn", CRC_NSI_CORE_FN, 0 }, UK_NSI_FRIENDS,
			     { "nsi_nowhere_fn", 0x45a1dead, 0 }, UK_PRINTK),
	    .modinfo = STRINGS("description=nsimport: imports module: namespaces on 6.16",
			       "import_ns=NSI_CORE", "import_ns=" NSI_FRIENDS,
			       "import_ns=module:nowhere", "import_ns=" NSI_FRIENDS,
			       "depends=nsi_core", INTREE)),
	NSI("nsi_old.ko", "nsi_old", "6.15.0", .exports = NO_EXPORTS,
	    .undefs = UNDEFS(UK_FENTRY, UK_NSI_FRIENDS, UK_PRINTK),
	    .modinfo = STRINGS("description=nsimport: the same imports on 6.15, ordinary there",
			       "import_ns=" NSI_FRIENDS, "import_ns=module:nowhere",
			       "depends=nsi_core", INTREE)),
	NSI("nsi_user_old.ko", "nsi_user_old", "6.15.0", .exports = NO_EXPORTS,
	    .undefs = UNDEFS(UK_FENTRY, UK_NSI_FRIENDS, UK_PRINTK),
	    .modinfo = STRINGS("description=nsimport: named by the patterns, but on 6.15",
			       "depends=nsi_core", INTREE)),
	NSI("nsi_user_new.ko", "nsi_user_new", "7.2.0", .exports = NO_EXPORTS,
	    .undefs = UNDEFS(UK_FENTRY, UK_NSI_FRIENDS, UK_PRINTK),
	    .modinfo = STRINGS("description=nsimport: named by a pattern's prefix, on 7.2",
			       "depends=nsi_core", INTREE)),
};
static const struct tree_file tree_nsimport_files[] = {
	TEXT(TREE_MODDIR("nsimport") "modules.order",
	     "kernel/drivers/nsi/nsi_core.ko\n"
	     "kernel/drivers/nsi/nsi_friend.ko\n"
	     "kernel/drivers/nsi/nsi_bad.ko\n"
	     "kernel/drivers/nsi/nsi_old.ko\n"
	     "kernel/drivers/nsi/nsi_user_old.ko\n"
	     "kernel/drivers/nsi/nsi_user_new.ko\n"),
	TEXT("Module.symvers",
	     SYMVERS_ROW("0x1f2e3d4c", "_printk", "vmlinux", "EXPORT_SYMBOL", "")
	     SYMVERS_ROW("0x0c0ffee0", "__fentry__", "vmlinux", "EXPORT_SYMBOL", "")
	     SYMVERS_ROW("0x5b8239ca", "__x86_return_thunk", "vmlinux", "EXPORT_SYMBOL", "")),
};

struct tree_case {
	const char *name;
	const struct fixture *modules;
	size_t n_modules;
	const struct tree_file *files;
	size_t n_files;
};

#define TREE(name_, mods_, files_) { name_, mods_, ARRAY_SIZE(mods_), files_, ARRAY_SIZE(files_) }
static const struct tree_case tree_cases[] = {
	TREE("chain", tree_chain, tree_chain_files),
	TREE("order", tree_order, tree_order_files),
	TREE("dups", tree_dups, tree_dups_files),
	TREE("builtin", tree_builtin, tree_builtin_files),
	TREE("devname", tree_devname, tree_devname_files),
	TREE("cycle", tree_cycle, tree_cycle_files),
	TREE("cycles", tree_cycles, tree_cycles_files),
	TREE("weak", tree_weak, tree_weak_files),
	TREE("config", tree_config, tree_config_files),
	TREE("crc", tree_crc, tree_crc_files),
	TREE("nsimport", tree_nsimport, tree_nsimport_files),
};

/* ---- small helpers ----------------------------------------------------------------------- */

__attribute__((noreturn, format(printf, 1, 2))) static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("gen-fixtures: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(EXIT_FAILURE);
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		die("out of memory");
	return p;
}

static void *xrealloc(void *p, size_t size)
{
	p = realloc(p, size);
	if (!p)
		die("out of memory");
	return p;
}

__attribute__((format(printf, 1, 2))) static char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (r < 0)
		die("out of memory");
	return s;
}

/* A growable byte buffer: section contents, string tables, whole files. */
struct buf {
	unsigned char *p;
	size_t len, cap;
};

static void buf_reserve(struct buf *b, size_t n)
{
	if (b->len + n <= b->cap)
		return;
	b->cap = b->cap ? b->cap : 64;
	while (b->cap < b->len + n)
		b->cap *= 2;
	b->p = xrealloc(b->p, b->cap);
}

/* Appends n bytes (zeros when data is NULL) and returns their offset. */
static size_t buf_add(struct buf *b, const void *data, size_t n)
{
	size_t at = b->len;

	buf_reserve(b, n);
	if (data)
		memcpy(b->p + at, data, n);
	else
		memset(b->p + at, 0, n);
	b->len += n;
	return at;
}

static size_t buf_str(struct buf *b, const char *s)
{
	return buf_add(b, s, strlen(s) + 1);
}

static void buf_free(struct buf *b)
{
	free(b->p);
	*b = (struct buf){ NULL, 0, 0 };
}

/* Stores v in width bytes in the file's byte order. */
static void put_uint(unsigned char *p, uint64_t v, unsigned width, bool big_endian)
{
	for (unsigned i = 0; i < width; i++)
		p[big_endian ? width - 1 - i : i] = (unsigned char)(v >> (8 * i));
}

static void write_file(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	const unsigned char *p = data;

	if (fd < 0)
		die("%s: %s", path, strerror(errno));
	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			die("%s: %s", path, strerror(errno));
		p += n;
		len -= (size_t)n;
	}
	if (close(fd) < 0)
		die("%s: %s", path, strerror(errno));
}

/* Closes a file written with stdio, dying on any write error. */
static void close_file(FILE *f, const char *path)
{
	bool failed = ferror(f);

	if (fclose(f) || failed)
		die("%s: write error", path);
}

/* Creates every missing directory leading to the file at path. */
static void make_parents(const char *path)
{
	char *dir = xasprintf("%s", path);

	for (char *slash = strchr(dir + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		if (mkdir(dir, 0755) < 0 && errno != EEXIST)
			die("%s: %s", dir, strerror(errno));
		*slash = '/';
	}
	free(dir);
}

/* ---- the object model: sections, symbols, relocations before layout --------------------- */

#define MAX_SECTIONS 24

struct section {
	const char *name;
	unsigned type;
	uint64_t flags, align, entsize;
	struct buf data;
	size_t sym; /* its STT_SECTION symbol, 0 until one is needed */
};

struct symbol {
	char *name; /* owned; "" for the null and section symbols */
	uint64_t value, size;
	unsigned char bind, type;
	int sec;    /* index in obj.sections, -1 = SHN_UNDEF */
};

struct reloc {
	int sec; /* the section it patches */
	uint64_t offset;
	size_t sym;
	unsigned type;
	uint64_t addend;
};

struct obj {
	const struct arch *arch;
	struct section sections[MAX_SECTIONS];
	int n_sections;
	struct symbol *syms;
	size_t n_syms;
	struct reloc *relocs;
	size_t n_relocs;
};

static int add_section(struct obj *o, const char *name, unsigned type, uint64_t flags,
		       uint64_t align, uint64_t entsize)
{
	struct section *s;

	if (o->n_sections == MAX_SECTIONS)
		die("too many sections");
	s = &o->sections[o->n_sections];
	*s = (struct section){ name, type, flags, align, entsize, { NULL, 0, 0 }, 0 };
	return o->n_sections++;
}

/* Takes ownership of name; returns the symbol's index in the model (not the final one). */
static size_t add_symbol(struct obj *o, char *name, unsigned char bind, unsigned char type,
			 int sec, uint64_t value, uint64_t size)
{
	o->syms = xrealloc(o->syms, (o->n_syms + 1) * sizeof(*o->syms));
	o->syms[o->n_syms] = (struct symbol){ name, value, size, bind, type, sec };
	return o->n_syms++;
}

static size_t section_symbol(struct obj *o, int sec)
{
	if (!o->sections[sec].sym)
		o->sections[sec].sym = add_symbol(o, xasprintf("%s", ""), STB_LOCAL, STT_SECTION,
						  sec, 0, 0);
	return o->sections[sec].sym;
}

static void add_reloc(struct obj *o, int sec, uint64_t offset, size_t sym, unsigned type,
		      uint64_t addend)
{
	o->relocs = xrealloc(o->relocs, (o->n_relocs + 1) * sizeof(*o->relocs));
	o->relocs[o->n_relocs++] = (struct reloc){ sec, offset, sym, type, addend };
}

/* Points the width-byte field at sec+at to sym + addend, as the assembler would. */
static void put_field(struct obj *o, int sec, uint64_t at, unsigned width, size_t sym,
		      uint64_t addend, unsigned type)
{
	if (o->arch->rela) {
		add_reloc(o, sec, at, sym, type, addend);
		return;
	}
	/* REL: the addend lives in the patched bytes. */
	put_uint(o->sections[sec].data.p + at, addend, width, o->arch->data == ELFDATA2MSB);
	add_reloc(o, sec, at, sym, type, 0);
}

static void obj_free(struct obj *o)
{
	for (int i = 0; i < o->n_sections; i++)
		buf_free(&o->sections[i].data);
	for (size_t i = 0; i < o->n_syms; i++)
		free(o->syms[i].name);
	free(o->syms);
	free(o->relocs);
}

/* ---- building one module from its table entry -------------------------------------------- */

/* Section indexes of the module being built; -1 = absent. */
struct layout {
	int text, strings, rodata, flagstab, knsimport, ksymtab[K_COUNT], kcrctab[K_COUNT];
};

static unsigned ptr_size(const struct arch *a)
{
	return a->elfclass == ELFCLASS64 ? 8 : 4;
}

static unsigned field_width(const struct arch *a)
{
	return a->prel32 ? 4 : ptr_size(a);
}

/* 7.1 put every export in __ksymtab; before, the export type chose the section. */
static enum kind section_kind(const struct fixture *fx, enum kind kind)
{
	return fx->era == ERA_7_1 ? K_SYMBOL : kind;
}

/* Since 5.5 the strings are asm labels (NOTYPE) in an "aMS" section; before, C arrays (OBJECT)
 * in a plain "a" section. */
static bool asm_strings(const struct fixture *fx)
{
	return fx->era >= ERA_5_5;
}

/* 5.4 and older write no namespace string for an export without namespace. */
static bool has_ns_string(const struct fixture *fx, const struct export *e)
{
	return e->ns || fx->era >= ERA_5_5;
}

static char *entry_symbol_name(const struct fixture *fx, const struct export *e)
{
	if (e->ns && (fx->era == ERA_RFC || fx->era == ERA_5_4_RC1))
		return xasprintf("__ksymtab_%s.%s", e->sym, e->ns);
	if (e->ns && fx->era == ERA_5_4_RC3)
		return xasprintf("__ksymtab_%s.%s", e->ns, e->sym);
	return xasprintf("__ksymtab_%s", e->sym);
}

static char *name_symbol_name(const struct fixture *fx, const struct export *e)
{
	if (e->ns && fx->era == ERA_RFC)
		return xasprintf("__kstrtab_%s__%s", e->sym, e->ns);
	return xasprintf("__kstrtab_%s", e->sym);
}

/* NULL where the era names no namespace string (the RFC's is an anonymous literal). */
static char *ns_symbol_name(const struct fixture *fx, const struct export *e)
{
	if (fx->era == ERA_RFC)
		return NULL;
	if (fx->era == ERA_5_4_RC1)
		return xasprintf("__kstrtab_ns_%s", e->sym);
	return xasprintf("__kstrtabns_%s", e->sym);
}

/* One function per export, plus init_module: global FUNCs in .text. */
static void emit_text(struct obj *o, const struct fixture *fx, const struct layout *l,
		      size_t *funcs)
{
	const struct arch *a = fx->arch;
	const size_t fn_size = 16;
	struct buf *text = &o->sections[l->text].data;
	size_t at;

	section_symbol(o, l->text);
	for (size_t i = 0; fx->exports[i].sym; i++) {
		at = buf_add(text, NULL, fn_size);
		memcpy(text->p + at, a->ret, a->ret_len);
		funcs[i] = add_symbol(o, xasprintf("%s", fx->exports[i].sym), STB_GLOBAL,
				      STT_FUNC, l->text, at, fn_size);
	}
	at = buf_add(text, NULL, fn_size);
	memcpy(text->p + at, a->ret, a->ret_len);
	add_symbol(o, xasprintf("init_module"), STB_GLOBAL, STT_FUNC, l->text, at, fn_size);
}

/* A string field: through the string's own symbol where the assembler keeps one, else the
 * section symbol + offset. */
static void put_string_ref(struct obj *o, int sec, uint64_t at, size_t strsym, int strsec,
			   uint64_t stroff)
{
	unsigned width = field_width(o->arch);

	if (strsym)
		put_field(o, sec, at, width, strsym, 0, o->arch->field_reloc);
	else
		put_field(o, sec, at, width, section_symbol(o, strsec), stroff,
			  o->arch->field_reloc);
}

/* One struct kernel_symbol {value, name, namespace}, its strings and its local symbols. */
static void emit_export(struct obj *o, const struct fixture *fx, const struct layout *l,
			const struct export *e, size_t func)
{
	unsigned width = field_width(fx->arch);
	enum kind slot = section_kind(fx, e->kind);
	int sec = l->ksymtab[slot], crc_sec = l->kcrctab[slot];
	int ns_sec = fx->era == ERA_RFC ? l->rodata : l->strings;
	uint64_t at = buf_add(&o->sections[sec].data, NULL, 3 * width);
	uint64_t name_off = buf_str(&o->sections[l->strings].data, e->sym);
	bool has_ns = has_ns_string(fx, e);
	uint64_t ns_off = has_ns ? buf_str(&o->sections[ns_sec].data, e->ns ? e->ns : "") : 0;
	unsigned char entry_type = asm_strings(fx) || fx->arch->prel32 ? STT_NOTYPE : STT_OBJECT;
	unsigned char str_type = asm_strings(fx) ? STT_NOTYPE : STT_OBJECT;
	/* GNU as keeps only a pc-relative reference to a label in a mergeable section as such;
	 * any other becomes section symbol + offset (checked with as 2.40). */
	bool via_label = asm_strings(fx) && fx->arch->prel32 && !fx->stripped;
	size_t name_sym = 0, ns_sym = 0;

	if (fx->era == ERA_7_1 && e->kind != K_SYMBOL && e->kind != K_GPL)
		die("%s: 7.1 has no %s", e->sym, kind_name[e->kind]);
	if ((crc_sec >= 0) != (e->crc != 0))
		die("%s: give every export of a module a CRC, or none", e->sym);
	if (!fx->stripped) {
		char *ns_name = has_ns ? ns_symbol_name(fx, e) : NULL;

		add_symbol(o, entry_symbol_name(fx, e), STB_LOCAL, entry_type, sec, at,
			   entry_type == STT_OBJECT ? 3 * width : 0);
		name_sym = add_symbol(o, name_symbol_name(fx, e), STB_LOCAL, str_type,
				      l->strings, name_off,
				      str_type == STT_OBJECT ? strlen(e->sym) + 1 : 0);
		if (ns_name)
			ns_sym = add_symbol(o, ns_name, STB_LOCAL, str_type, ns_sec, ns_off,
					    str_type == STT_OBJECT ? strlen(e->ns) + 1 : 0);
		if (fx->era == ERA_7_1)
			add_symbol(o, xasprintf("__flags_%s", e->sym), STB_LOCAL, STT_NOTYPE,
				   l->flagstab, o->sections[l->flagstab].data.len, 0);
		if (crc_sec >= 0)
			add_symbol(o, xasprintf("__crc_%s", e->sym), STB_LOCAL, STT_NOTYPE, crc_sec,
				   o->sections[crc_sec].data.len, 0);
	}
	put_field(o, sec, at, width, func, 0, fx->arch->field_reloc);
	put_string_ref(o, sec, at + width, via_label ? name_sym : 0, l->strings, name_off);
	if (has_ns)
		put_string_ref(o, sec, at + 2 * width, via_label ? ns_sym : 0, ns_sec, ns_off);
	if (fx->era == ERA_7_1) {
		unsigned char flag = e->kind == K_GPL ? 1 : 0;

		buf_add(&o->sections[l->flagstab].data, &flag, 1);
	}
	if (crc_sec >= 0) {
		struct buf *crcs = &o->sections[crc_sec].data;
		size_t crc_at = buf_add(crcs, NULL, 4);

		put_uint(crcs->p + crc_at, e->crc, 4, fx->arch->data == ELFDATA2MSB);
	}
}

/* RFC imports: __knsimport holds one pointer per MODULE_IMPORT_NS, to a literal in .rodata. */
static void emit_knsimport(struct obj *o, const struct fixture *fx, const struct layout *l)
{
	unsigned width = ptr_size(fx->arch);

	for (size_t i = 0; fx->knsimport[i]; i++) {
		uint64_t at = buf_add(&o->sections[l->knsimport].data, NULL, width);
		uint64_t str = buf_str(&o->sections[l->rodata].data, fx->knsimport[i]);

		add_symbol(o, xasprintf("__knsimport_%s", fx->knsimport[i]), STB_LOCAL, STT_OBJECT,
			   l->knsimport, at, width);
		put_field(o, l->knsimport, at, width, section_symbol(o, l->rodata), str,
			  fx->arch->ptr_reloc);
	}
}

static void emit_modinfo(struct obj *o, const struct fixture *fx)
{
	int sec = add_section(o, ".modinfo", SHT_PROGBITS, SHF_ALLOC, 1, 0);
	struct buf *b = &o->sections[sec].data;
	char *name = xasprintf("name=%s", fx->name);
	char *vermagic = xasprintf("vermagic=%s", fx->vermagic);

	buf_str(b, "license=GPL");
	for (size_t i = 0; fx->modinfo && fx->modinfo[i]; i++)
		buf_str(b, fx->modinfo[i]);
	buf_str(b, name);
	buf_str(b, vermagic);
	free(name);
	free(vermagic);
}

/* struct modversion_info { unsigned long crc; char name[64 - sizeof(long)]; } per entry. */
static void emit_versions(struct obj *o, const struct fixture *fx)
{
	int sec = add_section(o, "__versions", SHT_PROGBITS, SHF_ALLOC, 32, 0);
	struct buf *b = &o->sections[sec].data;
	unsigned crc_size = ptr_size(fx->arch);

	for (const struct undef *u = fx->undefs; u->sym; u++) {
		size_t at;

		if (u->flags & U_NOCRC)
			continue;
		if (strlen(u->sym) >= 64 - crc_size)
			die("%s: name too long for __versions", u->sym);
		at = buf_add(b, NULL, 64);
		put_uint(b->p + at, u->crc, crc_size, fx->arch->data == ELFDATA2MSB);
		memcpy(b->p + at + crc_size, u->sym, strlen(u->sym));
	}
}

/* struct module, zero but for its name (after the int state and the list_head). */
static void emit_this_module(struct obj *o, const struct fixture *fx)
{
	bool is64 = fx->arch->elfclass == ELFCLASS64;
	size_t size = is64 ? 0x380 : 0x200, name_at = is64 ? 24 : 12;
	int sec = add_section(o, ".gnu.linkonce.this_module", SHT_PROGBITS, SHF_ALLOC | SHF_WRITE,
			      is64 ? 64 : 32, 0);
	struct buf *b = &o->sections[sec].data;

	if (strlen(fx->name) >= 64 - ptr_size(fx->arch))
		die("%s: module name too long", fx->name);
	buf_add(b, NULL, size);
	memcpy(b->p + name_at, fx->name, strlen(fx->name));
	add_symbol(o, xasprintf("__this_module"), STB_GLOBAL, STT_OBJECT, sec, 0, size);
}

static void build_module(struct obj *o, const struct fixture *fx)
{
	size_t n_exports = 0, *funcs;
	struct layout l = { -1, -1, -1, -1, -1, { -1, -1, -1, -1, -1 }, { -1, -1, -1, -1, -1 } };
	bool crcs = fx->exports[0].sym && fx->exports[0].crc;

	while (fx->exports[n_exports].sym)
		n_exports++;
	funcs = xcalloc(n_exports, sizeof(*funcs));
	o->arch = fx->arch;
	add_symbol(o, xasprintf("%s", ""), STB_LOCAL, STT_NOTYPE, -1, 0, 0);

	l.text = add_section(o, ".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, 16, 0);
	emit_text(o, fx, &l, funcs);
	for (int k = 0; k < K_COUNT; k++)
		for (size_t i = 0; i < n_exports && l.ksymtab[k] < 0; i++)
			if ((int)section_kind(fx, fx->exports[i].kind) == k)
				l.ksymtab[k] = add_section(o, kind_section[k], SHT_PROGBITS,
							   SHF_ALLOC, field_width(fx->arch), 0);
	for (int k = 0; k < K_COUNT && crcs; k++)
		if (l.ksymtab[k] >= 0)
			l.kcrctab[k] = add_section(o, kind_crc_section[k], SHT_PROGBITS, SHF_ALLOC,
						   4, 0);
	if (fx->era == ERA_7_1)
		l.flagstab = add_section(o, "__kflagstab", SHT_PROGBITS, SHF_ALLOC, 1, 0);
	if (fx->era == ERA_RFC) {
		l.knsimport = add_section(o, "__knsimport", SHT_PROGBITS, SHF_ALLOC,
					  ptr_size(fx->arch), 0);
		l.rodata = add_section(o, ".rodata", SHT_PROGBITS, SHF_ALLOC, 8, 0);
	}
	if (n_exports)
		l.strings = asm_strings(fx)
			? add_section(o, "__ksymtab_strings", SHT_PROGBITS,
				      SHF_ALLOC | SHF_MERGE | SHF_STRINGS, 1, 1)
			: add_section(o, "__ksymtab_strings", SHT_PROGBITS, SHF_ALLOC, 1, 0);

	for (size_t i = 0; i < n_exports; i++)
		emit_export(o, fx, &l, &fx->exports[i], funcs[i]);
	if (fx->knsimport)
		emit_knsimport(o, fx, &l);
	emit_modinfo(o, fx);
	if (fx->versions)
		emit_versions(o, fx);
	emit_this_module(o, fx);
	for (const struct undef *u = fx->undefs; u->sym; u++)
		if (!(u->flags & U_NOSYM))
			add_symbol(o, xasprintf("%s", u->sym),
				   u->flags & U_WEAK ? STB_WEAK : STB_GLOBAL, STT_NOTYPE, -1, 0, 0);
	free(funcs);
}

/* ---- laying the object out as ELF with libelf --------------------------------------------- */

/* Where a symbol goes: null, section symbols, other locals, then globals (sh_info). */
static int symbol_rank(const struct symbol *s, size_t i)
{
	if (i == 0)
		return 0;
	if (s->type == STT_SECTION)
		return 1;
	return s->bind == STB_LOCAL ? 2 : 3;
}

/* Fills order[] (file position -> model index) and new_index[] (the reverse); returns the
 * number of local symbols, the index of the first global. */
static size_t order_symbols(const struct obj *o, size_t *order, size_t *new_index)
{
	size_t n = 0, n_locals = 0;

	for (int rank = 0; rank <= 3; rank++)
		for (size_t i = 0; i < o->n_syms; i++)
			if (symbol_rank(&o->syms[i], i) == rank) {
				new_index[i] = n;
				order[n++] = i;
				n_locals += rank < 3;
			}
	return n_locals;
}

/* Adds a section whose data (in memory byte order for dtype) libelf converts on write. */
static Elf_Data *new_section(Elf *elf, size_t name, unsigned type, uint64_t flags,
			     uint64_t align, uint64_t entsize, size_t link, size_t info,
			     void *data, size_t size, Elf_Type dtype)
{
	Elf_Scn *scn = elf_newscn(elf);
	Elf_Data *d = scn ? elf_newdata(scn) : NULL;
	GElf_Shdr sh;

	if (!d || !gelf_getshdr(scn, &sh))
		die("libelf: %s", elf_errmsg(-1));
	d->d_buf = data;
	d->d_size = size;
	d->d_type = dtype;
	d->d_align = align ? align : 1;
	d->d_version = EV_CURRENT;
	sh.sh_name = name;
	sh.sh_type = type;
	sh.sh_flags = flags;
	sh.sh_addralign = align;
	sh.sh_entsize = entsize;
	sh.sh_link = link;
	sh.sh_info = info;
	if (!gelf_update_shdr(scn, &sh))
		die("libelf: %s", elf_errmsg(-1));
	return d;
}

static size_t count_relocs(const struct obj *o, int sec)
{
	size_t n = 0;

	for (size_t i = 0; i < o->n_relocs; i++)
		n += o->relocs[i].sec == sec;
	return n;
}

/* The .rel or .rela section patching section sec; returns its buffer, for the caller to free. */
static void *add_reloc_section(Elf *elf, const struct obj *o, int sec, struct buf *shstrtab,
			       size_t symtab_index, size_t target_index, const size_t *new_index)
{
	const struct arch *a = o->arch;
	Elf_Type type = a->rela ? ELF_T_RELA : ELF_T_REL;
	size_t n = count_relocs(o, sec), size = gelf_fsize(elf, type, n, EV_CURRENT), r = 0;
	char *name = xasprintf("%s%s", a->rela ? ".rela" : ".rel", o->sections[sec].name);
	void *data = xcalloc(1, size);
	Elf_Data *d = new_section(elf, buf_str(shstrtab, name), a->rela ? SHT_RELA : SHT_REL,
				  SHF_INFO_LINK, ptr_size(a), gelf_fsize(elf, type, 1, EV_CURRENT),
				  symtab_index, target_index, data, size, type);

	for (size_t i = 0; i < o->n_relocs; i++) {
		const struct reloc *rl = &o->relocs[i];
		uint64_t info = GELF_R_INFO(new_index[rl->sym], rl->type);
		GElf_Rela rela = { rl->offset, info, (int64_t)rl->addend };
		GElf_Rel rel = { rl->offset, info };

		if (rl->sec != sec)
			continue;
		if (!(a->rela ? gelf_update_rela(d, (int)r, &rela) : gelf_update_rel(d, (int)r, &rel)))
			die("libelf: %s", elf_errmsg(-1));
		r++;
	}
	free(name);
	return data;
}

/* Reads the whole file behind fd into image. */
static void read_back(int fd, struct buf *image)
{
	struct stat st;

	if (fstat(fd, &st) < 0 || lseek(fd, 0, SEEK_SET) < 0)
		die("memfd: %s", strerror(errno));
	image->len = 0;
	buf_reserve(image, (size_t)st.st_size);
	while (image->len < (size_t)st.st_size) {
		ssize_t r = read(fd, image->p + image->len, (size_t)st.st_size - image->len);

		if (r <= 0)
			die("memfd: %s", r < 0 ? strerror(errno) : "short read");
		image->len += (size_t)r;
	}
}

/* Writes the object as an ET_REL file into image: each section followed by its .rel(a),
 * then .symtab, .strtab, .shstrtab. libelf does the layout and the byte order. */
static void write_elf(const struct obj *o, struct buf *image)
{
	const struct arch *a = o->arch;
	size_t elf_index[MAX_SECTIONS], next = 1, symtab_index, strtab_index, shstrtab_index;
	size_t *order = xcalloc(o->n_syms, sizeof(size_t));
	size_t *new_index = xcalloc(o->n_syms, sizeof(size_t));
	size_t n_locals = order_symbols(o, order, new_index), shstrtab_name, sym_size;
	void *rel_data[MAX_SECTIONS] = { NULL }, *sym_data;
	struct buf strtab = { NULL, 0, 0 }, shstrtab = { NULL, 0, 0 };
	int fd = memfd_create("gen-fixtures", MFD_CLOEXEC);
	GElf_Ehdr eh;
	Elf_Data *d;
	Elf *elf;

	if (fd < 0)
		die("memfd_create: %s", strerror(errno));
	for (int i = 0; i < o->n_sections; i++) {
		elf_index[i] = next++;
		next += count_relocs(o, i) ? 1 : 0;
	}
	symtab_index = next++;
	strtab_index = next++;
	shstrtab_index = next++;

	elf = elf_begin(fd, ELF_C_WRITE, NULL);
	if (!elf || !gelf_newehdr(elf, a->elfclass) || !gelf_getehdr(elf, &eh))
		die("libelf: %s", elf_errmsg(-1));
	eh.e_ident[EI_DATA] = a->data;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_ident[EI_OSABI] = ELFOSABI_NONE;
	eh.e_type = ET_REL;
	eh.e_machine = a->machine;
	eh.e_version = EV_CURRENT;
	eh.e_flags = a->e_flags;
	eh.e_shstrndx = shstrtab_index;
	if (!gelf_update_ehdr(elf, &eh))
		die("libelf: %s", elf_errmsg(-1));
	sym_size = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);

	buf_add(&shstrtab, NULL, 1);
	for (int i = 0; i < o->n_sections; i++) {
		const struct section *s = &o->sections[i];

		new_section(elf, buf_str(&shstrtab, s->name), s->type, s->flags, s->align,
			    s->entsize, 0, 0, s->data.p, s->data.len, ELF_T_BYTE);
		if (count_relocs(o, i))
			rel_data[i] = add_reloc_section(elf, o, i, &shstrtab, symtab_index,
							elf_index[i], new_index);
	}

	buf_add(&strtab, NULL, 1);
	sym_data = xcalloc(o->n_syms, sym_size);
	d = new_section(elf, buf_str(&shstrtab, ".symtab"), SHT_SYMTAB, 0, ptr_size(a), sym_size,
			strtab_index, n_locals, sym_data, o->n_syms * sym_size, ELF_T_SYM);
	for (size_t i = 0; i < o->n_syms; i++) {
		const struct symbol *s = &o->syms[order[i]];
		GElf_Sym gs = {
			.st_name = s->name[0] ? (Elf64_Word)buf_str(&strtab, s->name) : 0,
			.st_info = GELF_ST_INFO(s->bind, s->type),
			.st_other = STV_DEFAULT,
			.st_shndx = s->sec < 0 ? SHN_UNDEF : (Elf64_Section)elf_index[s->sec],
			.st_value = s->value,
			.st_size = s->size,
		};

		if (!gelf_update_sym(d, (int)i, &gs))
			die("libelf: %s", elf_errmsg(-1));
	}
	new_section(elf, buf_str(&shstrtab, ".strtab"), SHT_STRTAB, 0, 1, 0, 0, 0, strtab.p,
		    strtab.len, ELF_T_BYTE);
	/* .shstrtab names itself: add its name before handing libelf the finished table. */
	shstrtab_name = buf_str(&shstrtab, ".shstrtab");
	new_section(elf, shstrtab_name, SHT_STRTAB, 0, 1, 0, 0, 0, shstrtab.p, shstrtab.len,
		    ELF_T_BYTE);

	if (elf_update(elf, ELF_C_WRITE) < 0)
		die("libelf: %s", elf_errmsg(-1));
	elf_end(elf);
	read_back(fd, image);
	close(fd);

	for (int i = 0; i < o->n_sections; i++)
		free(rel_data[i]);
	free(sym_data);
	buf_free(&strtab);
	buf_free(&shstrtab);
	free(new_index);
	free(order);
}

/* ---- what goes around the ELF image --------------------------------------------------------- */

/* Garbage "PKCS#7" bytes, struct module_signature, then the marker: enough for kmod to see a
 * signature, which a reader must strip before the ELF (whose size it no longer equals). */
static void append_signature(struct buf *image)
{
	static const char marker[] = "~Module signature appended~\n";
	unsigned char sig[64], info[12] = { 0 };

	for (size_t i = 0; i < sizeof(sig); i++)
		sig[i] = (unsigned char)(0x30 + 7 * i);
	info[2] = 2; /* id_type PKEY_ID_PKCS7; algo, hash, signer_len, key_id_len stay 0 */
	put_uint(info + 8, sizeof(sig), 4, true);
	buf_add(image, sig, sizeof(sig));
	buf_add(image, info, sizeof(info));
	buf_add(image, marker, sizeof(marker) - 1);
}

/* A single xz stream with a CRC32 check and a 1 MiB dictionary, as the kernel's build makes. */
static void compress_xz(const struct buf *in, struct buf *out)
{
	lzma_options_lzma opt;
	lzma_filter filters[2];
	size_t cap = lzma_stream_buffer_bound(in->len);

	if (lzma_lzma_preset(&opt, LZMA_PRESET_DEFAULT))
		die("lzma preset");
	opt.dict_size = 1u << 20;
	filters[0] = (lzma_filter){ LZMA_FILTER_LZMA2, &opt };
	filters[1] = (lzma_filter){ LZMA_VLI_UNKNOWN, NULL };
	buf_reserve(out, cap);
	if (lzma_stream_buffer_encode(filters, LZMA_CHECK_CRC32, NULL, in->p, in->len, out->p,
				      &out->len, cap) != LZMA_OK)
		die("xz compression failed");
}

static void compress_zstd(const struct buf *in, struct buf *out)
{
	size_t cap = ZSTD_compressBound(in->len), n;

	buf_reserve(out, cap);
	n = ZSTD_compress(out->p, cap, in->p, in->len, ZSTD_CLEVEL_DEFAULT);
	if (ZSTD_isError(n))
		die("zstd: %s", ZSTD_getErrorName(n));
	out->len = n;
}

/* gzip format: windowBits 15 + 16. */
static void compress_gzip(const struct buf *in, struct buf *out)
{
	z_stream zs;
	uLong cap;

	memset(&zs, 0, sizeof(zs));
	if (deflateInit2(&zs, Z_BEST_COMPRESSION, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		die("deflateInit2 failed");
	cap = deflateBound(&zs, in->len);
	buf_reserve(out, cap);
	zs.next_in = in->p;
	zs.avail_in = (uInt)in->len;
	zs.next_out = out->p;
	zs.avail_out = (uInt)cap;
	if (deflate(&zs, Z_FINISH) != Z_STREAM_END)
		die("gzip compression failed");
	out->len = zs.total_out;
	deflateEnd(&zs);
}

static void (*const compressors[])(const struct buf *in, struct buf *out) = {
	[COMP_NONE] = NULL,
	[COMP_XZ] = compress_xz,
	[COMP_ZSTD] = compress_zstd,
	[COMP_GZIP] = compress_gzip,
};

/* ---- the expected reader dump ------------------------------------------------------------- */

static int compare_exports(const void *a, const void *b)
{
	const struct export *const *x = a, *const *y = b;

	return strcmp((*x)->sym, (*y)->sym);
}

/* The import records as written, before deduplication; returns how many. */
static size_t import_records(const struct fixture *fx, const char ***records)
{
	static const char key[] = "import_ns=";
	size_t n = 0;

	*records = xcalloc(1, sizeof(char *));
	for (size_t i = 0; fx->knsimport && fx->knsimport[i]; i++) {
		*records = xrealloc(*records, (n + 1) * sizeof(char *));
		(*records)[n++] = fx->knsimport[i];
	}
	for (size_t i = 0; fx->modinfo && fx->modinfo[i]; i++) {
		if (strncmp(fx->modinfo[i], key, sizeof(key) - 1))
			continue;
		*records = xrealloc(*records, (n + 1) * sizeof(char *));
		(*records)[n++] = fx->modinfo[i] + sizeof(key) - 1;
	}
	return n;
}

/* OUTDIR/dir/NAME.expected for OUTDIR/dir/NAME.ko[.ext]. */
static char *expected_path(const char *outdir, const char *file)
{
	const char *ko = NULL;

	for (const char *p = strstr(file, ".ko"); p; p = strstr(p + 1, ".ko"))
		if (p[3] == '\0' || p[3] == '.')
			ko = p;
	if (!ko)
		die("%s: no .ko in the file name", file);
	return xasprintf("%s/%.*s.expected", outdir, (int)(ko - file), file);
}

static void write_expected(const char *outdir, const struct fixture *fx)
{
	char *path = expected_path(outdir, fx->file);
	FILE *f = fopen(path, "we");
	const struct export **sorted;
	const char **records;
	size_t n_exports = 0, n_records;

	if (!f)
		die("%s: %s", path, strerror(errno));
	while (fx->exports[n_exports].sym)
		n_exports++;
	sorted = xcalloc(n_exports, sizeof(*sorted));
	for (size_t i = 0; i < n_exports; i++)
		sorted[i] = &fx->exports[i];
	qsort(sorted, n_exports, sizeof(*sorted), compare_exports);

	fprintf(f, "module %s\n", fx->name);
	fprintf(f, "elf %d %s\n", fx->arch->elfclass == ELFCLASS64 ? 64 : 32,
		fx->arch->data == ELFDATA2MSB ? "be" : "le");
	fprintf(f, "compression %s\n", compression_name[fx->compression]);
	for (size_t i = 0; i < n_exports; i++)
		fprintf(f, "export %s %s %s\n", sorted[i]->sym, kind_name[sorted[i]->kind],
			sorted[i]->ns && sorted[i]->ns[0] ? sorted[i]->ns : "-");
	n_records = import_records(fx, &records);
	for (size_t i = 0; i < n_records; i++) {
		size_t j = 0;

		while (j < i && strcmp(records[j], records[i]))
			j++;
		if (j == i)
			fprintf(f, "import %s\n", records[i]);
	}
	fprintf(f, "imports_raw %zu\n", n_records);
	for (const struct undef *u = fx->undefs; u->sym; u++) {
		if (u->flags & U_NOSYM)
			continue;
		if (fx->versions && !(u->flags & U_NOCRC))
			fprintf(f, "undef %s 0x%08x", u->sym, u->crc);
		else
			fprintf(f, "undef %s -", u->sym);
		fprintf(f, " %s\n", u->flags & U_WEAK ? "weak" : "global");
	}
	close_file(f, path);
	free(records);
	free(sorted);
	free(path);
}

/* ---- one fixture, start to finish --------------------------------------------------------- */

/* Builds the module fx describes and writes it to path, signed and compressed as it says. */
static void write_module(const char *path, const struct fixture *fx)
{
	struct obj o;
	struct buf image = { NULL, 0, 0 }, packed = { NULL, 0, 0 };
	const struct buf *out = &image;

	memset(&o, 0, sizeof(o));
	build_module(&o, fx);
	write_elf(&o, &image);
	/* The kernel's build signs, then compresses. */
	if (fx->signature)
		append_signature(&image);
	if (compressors[fx->compression]) {
		compressors[fx->compression](&image, &packed);
		out = &packed;
	}
	make_parents(path);
	write_file(path, out->p, out->len);

	obj_free(&o);
	buf_free(&image);
	buf_free(&packed);
}

static void write_fixture(const char *outdir, const struct fixture *fx)
{
	char *path = xasprintf("%s/%s", outdir, fx->file);

	write_module(path, fx);
	write_expected(outdir, fx);
	free(path);
}

/* ---- kernel images: a vmlinux ELF with export tables, and an x86 bzImage around it -------- */

enum payload { PAYLOAD_ELF, PAYLOAD_XZ, PAYLOAD_ZSTD, PAYLOAD_GZIP, PAYLOAD_LZ4 };

struct kernel_fixture {
	const char *file;        /* under OUTDIR/kernel/; FILE.expected beside it */
	const struct arch *arch; /* class, byte order; prel32: entries of 32-bit offsets */
	bool kflagstab;          /* 7.1+: one __ksymtab, GPL-ness in __kflagstab */
	bool crcs;               /* __kcrctab* (CONFIG_MODVERSIONS) */
	bool ns_null;            /* 5.4: no namespace = a null field, not a pointer to "" */
	enum payload payload;    /* the plain ELF, or a bzImage with this compression */
};

static const struct export kernel_exports[] = {
	{ "printk", K_SYMBOL, NULL, 0x11111111u },
	{ "kfree", K_SYMBOL, NULL, 0x22222222u },
	{ "dma_buf_get", K_GPL, "DMA_BUF", 0x33333333u },
	{ "cxl_probe", K_GPL, "CXL", 0x44444444u },
	{ "crypto_internal", K_SYMBOL, "CRYPTO_INTERNAL", 0x55555555u },
	{ "usb_only", K_GPL, "module:usb-storage,uas", 0x66666666u },
	{ "gpl_future_sym", K_GPL_FUTURE, NULL, 0x77777777u },
	{ "unused_sym", K_UNUSED, NULL, 0x88888888u },
	{ "unused_gpl_sym", K_UNUSED_GPL, "OLD_NS", 0x99999999u },
	{ NULL, K_SYMBOL, NULL, 0 },
};

static const struct kernel_fixture kernel_fixtures[] = {
	{ "x86_64.elf", &arch_x86_64, false, true, false, PAYLOAD_ELF },
	{ "vmlinuz-gzip", &arch_x86_64, false, true, false, PAYLOAD_GZIP },
	{ "vmlinuz-xz", &arch_x86_64, false, true, true, PAYLOAD_XZ },
	{ "vmlinuz-zstd-7.1", &arch_x86_64, true, false, false, PAYLOAD_ZSTD },
	{ "vmlinuz-lz4", &arch_x86_64, false, true, false, PAYLOAD_LZ4 },
	{ "i386.elf", &arch_i386, false, true, false, PAYLOAD_ELF },
	{ "x86_64-pointers.elf", &arch_x86_64_abs, false, false, true, PAYLOAD_ELF },
	{ "ppc64.elf", &arch_ppc64, false, true, true, PAYLOAD_ELF },
	{ "armeb-7.1.elf", &arch_armeb, true, true, false, PAYLOAD_ELF },
};

/* Where the kernel's export of kind k goes: 7.1 has one table for all. */
static enum kind kernel_kind(const struct kernel_fixture *kf, enum kind k)
{
	return kf->kflagstab ? K_SYMBOL : k;
}

/* Stores field f of an entry at address at, pointing at target (0 = null). */
static void put_entry_field(const struct kernel_fixture *kf, unsigned char *p, uint64_t at,
			    uint64_t target)
{
	bool be = kf->arch->data == ELFDATA2MSB;

	if (kf->arch->prel32)
		put_uint(p, target ? target - at : 0, 4, be);
	else
		put_uint(p, target, ptr_size(kf->arch), be);
}

struct kernel_section {
	const char *name;
	struct buf *b;
	uint64_t addr, flags;
};

/* An ET_EXEC vmlinux: .text, __ksymtab*, __kcrctab*, __kflagstab, __ksymtab_strings at
 * run-time addresses; no symbol table, like a stripped kernel. */
static void write_vmlinux(const struct kernel_fixture *kf, struct buf *image)
{
	const struct arch *a = kf->arch;
	bool be = a->data == ELFDATA2MSB;
	unsigned w = field_width(a), entry = 3 * w;
	uint64_t base = a->elfclass == ELFCLASS64 ? 0xffffffff81000000ull : 0xc1000000ull;
	struct buf tab[K_COUNT] = { 0 }, crc[K_COUNT] = { 0 }, flags = { 0 }, strings = { 0 };
	struct buf text = { 0 }, shstrtab = { 0 };
	uint64_t tab_addr[K_COUNT], crc_addr[K_COUNT], flags_addr, strings_addr, addr, empty;
	struct kernel_section secs[2 * K_COUNT + 3];
	size_t used[K_COUNT] = { 0 }, name_off[2 * K_COUNT + 3], n_secs = 0, shstrtab_name;
	int fd = memfd_create("gen-fixtures", MFD_CLOEXEC);
	GElf_Ehdr eh;
	Elf *elf;
	size_t n;

	if (fd < 0)
		die("memfd_create: %s", strerror(errno));
	/* Sizes first: the addresses of the tables depend on them. */
	for (n = 0; kernel_exports[n].sym; n++) {
		enum kind k = kernel_kind(kf, kernel_exports[n].kind);
		buf_add(&tab[k], NULL, entry);
		if (kf->crcs)
			buf_add(&crc[k], NULL, 4);
		if (kf->kflagstab)
			buf_add(&flags, NULL, 1);
	}
	buf_add(&text, NULL, 16 * n);
	addr = base + text.len;
	for (int k = 0; k < K_COUNT; k++)
		tab_addr[k] = addr, addr += tab[k].len;
	for (int k = 0; k < K_COUNT; k++)
		crc_addr[k] = addr, addr += crc[k].len;
	flags_addr = addr, addr += flags.len;
	strings_addr = addr;
	empty = buf_str(&strings, "");

	/* Then the entries, in table order. */
	for (size_t i = 0; i < n; i++) {
		const struct export *e = &kernel_exports[i];
		enum kind k = kernel_kind(kf, e->kind);
		size_t at = used[k]++ * entry;
		uint64_t name = strings_addr + buf_str(&strings, e->sym);
		uint64_t ns = e->ns ? strings_addr + buf_str(&strings, e->ns) :
			      kf->ns_null ? 0 : strings_addr + empty;

		put_entry_field(kf, tab[k].p + at, tab_addr[k] + at, base + 16 * i);
		put_entry_field(kf, tab[k].p + at + w, tab_addr[k] + at + w, name);
		put_entry_field(kf, tab[k].p + at + 2 * w, tab_addr[k] + at + 2 * w, ns);
		if (kf->crcs)
			put_uint(crc[k].p + at / entry * 4, e->crc, 4, be);
		if (kf->kflagstab)
			flags.p[at / entry] = e->kind == K_GPL ? 1 : 0;
	}
	for (size_t i = 0; i < n; i++)
		memcpy(text.p + 16 * i, a->ret, a->ret_len);

	elf = elf_begin(fd, ELF_C_WRITE, NULL);
	if (!elf || !gelf_newehdr(elf, a->elfclass) || !gelf_getehdr(elf, &eh))
		die("libelf: %s", elf_errmsg(-1));
	eh.e_ident[EI_DATA] = a->data;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_EXEC;
	eh.e_machine = a->machine;
	eh.e_version = EV_CURRENT;
	eh.e_flags = a->e_flags;
	eh.e_entry = base;
	buf_add(&shstrtab, NULL, 1);
	secs[n_secs++] = (struct kernel_section){ ".text", &text, base, SHF_ALLOC | SHF_EXECINSTR };
	for (int k = 0; k < K_COUNT; k++)
		if (tab[k].len)
			secs[n_secs++] = (struct kernel_section){ kind_section[k], &tab[k], tab_addr[k], SHF_ALLOC };
	for (int k = 0; k < K_COUNT; k++)
		if (crc[k].len)
			secs[n_secs++] = (struct kernel_section){ kind_crc_section[k], &crc[k], crc_addr[k], SHF_ALLOC };
	if (flags.len)
		secs[n_secs++] = (struct kernel_section){ "__kflagstab", &flags, flags_addr, SHF_ALLOC };
	secs[n_secs++] = (struct kernel_section){ "__ksymtab_strings", &strings, strings_addr,
					    SHF_ALLOC | SHF_MERGE | SHF_STRINGS };
	for (size_t i = 0; i < n_secs; i++)
		name_off[i] = buf_str(&shstrtab, secs[i].name);
	shstrtab_name = buf_str(&shstrtab, ".shstrtab");
	for (size_t i = 0; i < n_secs; i++) {
		Elf_Scn *scn;
		GElf_Shdr sh;

		new_section(elf, name_off[i], SHT_PROGBITS, secs[i].flags, 1,
			    !strcmp(secs[i].name, "__ksymtab_strings") ? 1 : 0, 0, 0, secs[i].b->p,
			    secs[i].b->len, ELF_T_BYTE);
		scn = elf_getscn(elf, i + 1);
		if (!scn || !gelf_getshdr(scn, &sh))
			die("libelf: %s", elf_errmsg(-1));
		sh.sh_addr = secs[i].addr;
		if (!gelf_update_shdr(scn, &sh))
			die("libelf: %s", elf_errmsg(-1));
	}
	new_section(elf, shstrtab_name, SHT_STRTAB, 0, 1, 0, 0, 0, shstrtab.p, shstrtab.len, ELF_T_BYTE);
	eh.e_shstrndx = n_secs + 1;
	if (!gelf_update_ehdr(elf, &eh) || elf_update(elf, ELF_C_WRITE) < 0)
		die("libelf: %s", elf_errmsg(-1));
	elf_end(elf);
	read_back(fd, image);
	close(fd);
	for (int k = 0; k < K_COUNT; k++)
		buf_free(&tab[k]), buf_free(&crc[k]);
	buf_free(&flags), buf_free(&strings), buf_free(&text), buf_free(&shstrtab);
}

/* The kernel's lz4 format: the legacy frame (magic, then LE32 size + block per 8 MiB). */
static void compress_lz4_legacy(const struct buf *in, struct buf *out)
{
	const size_t block = (size_t)8 << 20;
	unsigned char le[4];

	put_uint(le, 0x184c2102u, 4, false);
	buf_add(out, le, 4);
	for (size_t at = 0; at < in->len; at += block) {
		int len = (int)(in->len - at < block ? in->len - at : block);
		int cap = LZ4_compressBound(len), n;
		size_t size_at = buf_add(out, NULL, 4);

		buf_reserve(out, (size_t)cap);
		n = LZ4_compress_default((const char *)in->p + at, (char *)out->p + out->len, len, cap);
		if (n <= 0)
			die("lz4 compression failed");
		put_uint(out->p + size_at, (uint64_t)n, 4, false);
		out->len += (size_t)n;
	}
}

/* A bzImage as the boot protocol (2.15) lays it out: setup sectors holding the setup
 * header, then the protected-mode code with the payload inside, its size appended. */
static void write_bzimage(const struct buf *vmlinux, enum payload payload, struct buf *image)
{
	const size_t setup_sects = 1, start = (setup_sects + 1) * 512, payload_offset = 0x40;
	struct buf packed = { 0 };
	unsigned char *h;
	size_t at;

	switch (payload) {
	case PAYLOAD_XZ: compress_xz(vmlinux, &packed); break;
	case PAYLOAD_ZSTD: compress_zstd(vmlinux, &packed); break;
	case PAYLOAD_GZIP: compress_gzip(vmlinux, &packed); break;
	case PAYLOAD_LZ4: compress_lz4_legacy(vmlinux, &packed); break;
	default: die("no payload compression");
	}
	at = buf_add(&packed, NULL, 4);
	put_uint(packed.p + at, vmlinux->len, 4, false);
	at = buf_add(image, NULL, start + payload_offset);
	h = image->p + at;
	h[0x1f1] = setup_sects;
	put_uint(h + 0x1fe, 0xaa55, 2, false);
	memcpy(h + 0x202, "HdrS", 4);
	put_uint(h + 0x206, 0x020f, 2, false);
	put_uint(h + 0x248, payload_offset, 4, false);
	put_uint(h + 0x24c, packed.len, 4, false);
	buf_add(image, packed.p, packed.len);
	/* the decompressor's own code follows the payload in a real image */
	at = buf_add(image, NULL, 64);
	memset(image->p + at, 0xcc, 64);
	buf_free(&packed);
}

static int compare_export_symbols(const void *a, const void *b)
{
	return strcmp(((const struct export *)a)->sym, ((const struct export *)b)->sym);
}

/* FILE.expected: the lines of `ns-dump --vmlinuz`, sorted by symbol. */
static void write_kernel_expected(const char *path, const struct kernel_fixture *kf)
{
	struct export sorted[ARRAY_SIZE(kernel_exports)];
	size_t n = 0;
	FILE *f = fopen(path, "we");

	if (!f)
		die("%s: %s", path, strerror(errno));
	for (; kernel_exports[n].sym; n++)
		sorted[n] = kernel_exports[n];
	qsort(sorted, n, sizeof(sorted[0]), compare_export_symbols);
	for (size_t i = 0; i < n; i++) {
		/* 7.1's one table knows only GPL-only or not */
		enum kind k = kf->kflagstab ? (sorted[i].kind == K_GPL ? K_GPL : K_SYMBOL) : sorted[i].kind;
		fprintf(f, "%s\t%s\t%s\t", sorted[i].sym, sorted[i].ns ? sorted[i].ns : "", kind_name[k]);
		if (kf->crcs)
			fprintf(f, "0x%08x\n", sorted[i].crc);
		else
			fprintf(f, "-\n");
	}
	close_file(f, path);
}

static void write_kernels(const char *outdir)
{
	for (size_t i = 0; i < ARRAY_SIZE(kernel_fixtures); i++) {
		const struct kernel_fixture *kf = &kernel_fixtures[i];
		char *path = xasprintf("%s/kernel/%s", outdir, kf->file);
		char *expected = xasprintf("%s.expected", path);
		struct buf vmlinux = { 0 }, image = { 0 };

		make_parents(path);
		write_vmlinux(kf, &vmlinux);
		if (kf->payload == PAYLOAD_ELF) {
			write_file(path, vmlinux.p, vmlinux.len);
		} else {
			write_bzimage(&vmlinux, kf->payload, &image);
			write_file(path, image.p, image.len);
		}
		write_kernel_expected(expected, kf);
		buf_free(&vmlinux);
		buf_free(&image);
		free(path);
		free(expected);
	}
}

/* ---- the sample tree's index files -------------------------------------------------------- */

static void write_symvers_rows(FILE *f, const struct export *exports, const char *owner)
{
	for (const struct export *e = exports; e->sym; e++)
		fprintf(f, "0x%08x\t%s\t%s\t%s\t%s\n", e->crc, e->sym, owner, kind_name[e->kind],
			e->ns ? e->ns : "");
}

/* modules.order lists the sample modules; Module.symvers has vmlinux's rows and theirs. */
static void write_sample_index(const char *outdir)
{
	static const char kdir[] = SAMPLE_KDIR;
	char *order_path = xasprintf("%s/%s/modules.order", outdir, SAMPLE_MODDIR);
	char *symvers_path = xasprintf("%s/sample/Module.symvers", outdir);
	FILE *order = fopen(order_path, "we"), *symvers = fopen(symvers_path, "we");

	if (!order || !symvers)
		die("%s: %s", order ? symvers_path : order_path, strerror(errno));
	write_symvers_rows(symvers, sample_vmlinux_exports, "vmlinux");
	for (size_t i = 0; i < ARRAY_SIZE(fixtures); i++) {
		const char *file = fixtures[i].file;
		/* Module.symvers names a module by its path under kernel/, without .ko. */
		char *owner;

		if (strncmp(file, kdir, sizeof(kdir) - 1))
			continue;
		fprintf(order, "kernel/%s\n", file + sizeof(kdir) - 1);
		owner = xasprintf("%.*s", (int)(strlen(file) - (sizeof(kdir) - 1) - 3),
				  file + sizeof(kdir) - 1);
		write_symvers_rows(symvers, fixtures[i].exports, owner);
		free(owner);
	}
	close_file(order, order_path);
	close_file(symvers, symvers_path);
	free(order_path);
	free(symvers_path);
}

/* ---- the dependency-test trees ----------------------------------------------------------- */

/* Writes a side file, every "@CASEDIR@" in it replaced by casedir. */
static void write_tree_file(const char *path, const struct tree_file *tf, const char *casedir)
{
	static const char key[] = "@CASEDIR@";
	const char *p = tf->data, *end = tf->data + tf->len, *at;
	struct buf b = { NULL, 0, 0 };

	while ((at = memmem(p, (size_t)(end - p), key, sizeof(key) - 1)) != NULL) {
		if (at > p)
			buf_add(&b, p, (size_t)(at - p));
		buf_add(&b, casedir, strlen(casedir));
		p = at + sizeof(key) - 1;
	}
	if (end > p)
		buf_add(&b, p, (size_t)(end - p));
	make_parents(path);
	write_file(path, b.p, b.len);
	buf_free(&b);
}

static int compare_strings(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The namespaces of a tree's exports without CRC, sorted, one a line: the strings kmod's depmod
 * takes for symbols (it reads such exports from all of __ksymtab_strings). */
static void write_namespace_strings(const char *path, const struct tree_case *tc)
{
	const char **ns = NULL;
	size_t n = 0;
	FILE *f = fopen(path, "we");

	if (!f)
		die("%s: %s", path, strerror(errno));
	for (size_t i = 0; i < tc->n_modules; i++)
		for (const struct export *e = tc->modules[i].exports; e->sym; e++)
			if (!e->crc && e->ns && e->ns[0]) {
				ns = xrealloc(ns, (n + 1) * sizeof(*ns));
				ns[n++] = e->ns;
			}
	if (n)
		qsort(ns, n, sizeof(*ns), compare_strings);
	for (size_t i = 0; i < n; i++)
		if (i == 0 || strcmp(ns[i], ns[i - 1]))
			fprintf(f, "%s\n", ns[i]);
	close_file(f, path);
	free(ns);
}

static void write_tree_case(const char *abs, const struct tree_case *tc)
{
	char *casedir = xasprintf("%s/%s", abs, tc->name), *path;

	for (size_t i = 0; i < tc->n_modules; i++) {
		path = xasprintf("%s/%s", casedir, tc->modules[i].file);
		write_module(path, &tc->modules[i]);
		free(path);
	}
	for (size_t i = 0; i < tc->n_files; i++) {
		path = xasprintf("%s/%s", casedir, tc->files[i].path);
		write_tree_file(path, &tc->files[i], casedir);
		free(path);
	}
	path = xasprintf("%s/kmod-namespace-strings", casedir);
	write_namespace_strings(path, tc);
	free(path);
	free(casedir);
}

/* A fixed linear congruential generator: the same "random" tree on every run. */
static uint32_t dag_random(uint32_t *state, uint32_t bound)
{
	*state = *state * 1103515245u + 12345u;
	return (*state >> 16) % bound;
}

/* dag: DAG_N modules, dag_<i> exporting dag_<i>_fn and using the exports of about one in five
 * lower-numbered modules, in a shuffled symbol order; modules.order lists them shuffled too, so
 * the transitive dep lines take kmod's topological order, not the numbering. */
#define DAG_N 48
static void write_dag(const char *abs)
{
	static const char *const subdirs[] = { "kernel/drivers/dag", "kernel/net/dag", "kernel/fs/dag" };
	static const char *const modinfo[] = { "description=dag: one of many", INTREE, NULL };
	struct fixture fx[DAG_N];
	struct export exports[DAG_N][2];
	struct undef undefs[DAG_N][DAG_N + 3];
	size_t order[DAG_N];
	uint32_t state = 0x2545f491u;
	struct buf list = { NULL, 0, 0 };
	struct tree_file order_file;
	struct tree_case tc = { "dag", fx, DAG_N, &order_file, 1 };

	for (size_t i = 0; i < DAG_N; i++) {
		size_t n = 0;

		exports[i][0] = (struct export){ xasprintf("dag_%zu_fn", i), K_GPL, NULL,
						 0xda900000u + (uint32_t)i };
		exports[i][1] = (struct export){ NULL, 0, NULL, 0 };
		undefs[i][n++] = (struct undef)UK_FENTRY;
		for (size_t j = 0; j < i; j++)
			if (dag_random(&state, 5) == 0)
				undefs[i][n++] = (struct undef){ exports[j][0].sym, exports[j][0].crc, 0 };
		undefs[i][n++] = (struct undef)UK_THUNK;
		undefs[i][n] = (struct undef){ NULL, 0, 0 };
		for (size_t k = n - 2; k > 1; k--) { /* shuffle the module symbols, not the ends */
			size_t r = 1 + dag_random(&state, (uint32_t)k);
			struct undef t = undefs[i][k];

			undefs[i][k] = undefs[i][r];
			undefs[i][r] = t;
		}
		fx[i] = (struct fixture){
			.file = xasprintf(TREE_MODDIR("dag") "%s/dag_%zu.ko", subdirs[i % 3], i),
			.name = xasprintf("dag_%zu", i), .vermagic = TREE_KVER("dag")
			" SMP preempt mod_unload modversions ", .era = ERA_5_5, .arch = &arch_x86_64,
			.versions = true, .exports = exports[i], .undefs = undefs[i], .modinfo = modinfo,
		};
		order[i] = i;
	}
	for (size_t k = DAG_N - 1; k > 0; k--) {
		size_t r = dag_random(&state, (uint32_t)k + 1), t = order[k];

		order[k] = order[r];
		order[r] = t;
	}
	for (size_t k = 0; k < DAG_N; k++) {
		const char *rel = fx[order[k]].file + strlen(TREE_MODDIR("dag"));

		buf_add(&list, rel, strlen(rel));
		buf_add(&list, "\n", 1);
	}
	order_file = (struct tree_file){ TREE_MODDIR("dag") "modules.order", (char *)list.p, list.len };
	write_tree_case(abs, &tc);
	for (size_t i = 0; i < DAG_N; i++) {
		free((char *)exports[i][0].sym);
		free((char *)fx[i].file);
		free((char *)fx[i].name);
	}
	buf_free(&list);
}

static void write_trees(const char *outdir)
{
	char *probe = xasprintf("%s/.", outdir), *abs;

	make_parents(probe);
	free(probe);
	abs = realpath(outdir, NULL);
	if (!abs)
		die("%s: %s", outdir, strerror(errno));
	for (size_t c = 0; c < ARRAY_SIZE(tree_cases); c++)
		write_tree_case(abs, &tree_cases[c]);
	write_dag(abs);
	free(abs);
}

int main(int argc, char **argv)
{
	bool trees = argc == 3 && !strcmp(argv[1], "--tree");

	if (argc != 2 && !trees) {
		fprintf(stderr, "usage: %s OUTDIR\n       %s --tree OUTDIR\n", argv[0], argv[0]);
		return 2;
	}
	if (elf_version(EV_CURRENT) == EV_NONE)
		die("libelf: %s", elf_errmsg(-1));
	if (trees) {
		write_trees(argv[2]);
		return 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(fixtures); i++)
		write_fixture(argv[1], &fixtures[i]);
	write_sample_index(argv[1]);
	write_kernels(argv[1]);
	return 0;
}
