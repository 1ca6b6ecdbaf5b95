/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the parts of libkmodns share and the outside never sees. */
#pragma once

#include <syslog.h>

#include "libkmodns.h"
#include "libkmodns-util.h"

struct kmodns_ctx {
	int refcount;
	kmodns_log_fn log_fn;
	void *log_data;
	int log_priority;
};

_printf_(6, 7) void kmodns_log(const struct kmodns_ctx *ctx, int priority, const char *file,
			       int line, const char *fn, const char *format, ...);

#define kmodns_log_cond(ctx, prio, ...)                                                   \
	do {                                                                              \
		if ((ctx)->log_fn != NULL && (ctx)->log_priority >= (prio))               \
			kmodns_log(ctx, prio, __FILE__, __LINE__, __func__, __VA_ARGS__); \
	} while (0)
#define ERR(ctx, ...) kmodns_log_cond(ctx, LOG_ERR, __VA_ARGS__)
#define WARN(ctx, ...) kmodns_log_cond(ctx, LOG_WARNING, __VA_ARGS__)
#define INFO(ctx, ...) kmodns_log_cond(ctx, LOG_INFO, __VA_ARGS__)
#define DBG(ctx, ...) kmodns_log_cond(ctx, LOG_DEBUG, __VA_ARGS__)

struct kmodns_export {
	const char *symbol;
	const char *ns; /* "" when none */
	const char *owner;
	const char *owner_name; /* the kernel's name for the owner */
	enum kmodns_export_type type;
	bool has_crc;
	uint32_t crc;
};

struct kmodns_symbol {
	const char *name;
	bool weak;
	bool has_crc;
	uint32_t crc;
};

struct kmodns_module {
	int refcount;
	struct kmodns_ctx *ctx;
	struct arena strings;
	const char *path;
	const char *name;
	const char *vermagic;
	unsigned kernel_version;
	enum kmodns_compression compression;
	int elf_class;
	bool big_endian;
	bool signature_appended; /* the image ends in the kernel's module-signature marker */
	struct kmodns_export *exports;
	size_t n_exports, exports_capacity;
	struct strset export_namespaces; /* of the exports, "" for those without, first-seen order */
	struct strset imports;
	size_t imports_raw;
	struct kmodns_symbol *undefined;
	size_t n_undefined, undefined_capacity;
	struct modinfo_record { const char *key, *value; } *modinfo;
	size_t n_modinfo, modinfo_capacity;
	struct version_record { const char *name; uint32_t crc; } *versions;
	size_t n_versions, versions_capacity;
};

/* A module image in memory, decompressed. */
struct kmodns_image {
	char *data;
	size_t size;
	enum kmodns_compression compression;
};

/* Reads path (or takes in/in_size when path is NULL) and decompresses by magic;
 * limit > 0 stops after that many decompressed bytes. */
int kmodns_image_load(struct kmodns_ctx *ctx, const char *path, const void *in, size_t in_size,
		      const char *label, size_t limit, struct kmodns_image *image);
/* Checks what a reader trusts before the section table: ident, type, header table fields. */
int kmodns_elf_check_header(struct kmodns_ctx *ctx, const char *label, const char *data, size_t size);

/* A new, empty module object for path; NULL without memory. */
struct kmodns_module *kmodns_module_alloc(struct kmodns_ctx *ctx, const char *path);
/* What follows from the facts read: the name's spelling, exports' owner, kernel version. */
int kmodns_module_finish(struct kmodns_module *mod);

/* Fills mod's ELF facts, exports, imports and undefined symbols from image. */
int kmodns_elf_read(struct kmodns_module *mod, struct kmodns_image *image, unsigned flags);

int kmodns_module_add_export(struct kmodns_module *mod, const char *symbol, size_t symbol_len,
			     const char *ns, enum kmodns_export_type type);
int kmodns_module_add_import(struct kmodns_module *mod, const char *ns);
/* One "key=value" record of .modinfo (a record without '=' has value ""). */
int kmodns_module_add_modinfo(struct kmodns_module *mod, const char *record);
const char *kmodns_name_from_path(struct arena *arena, const char *path);
int kmodns_module_add_version(struct kmodns_module *mod, const char *name, uint32_t crc);
int kmodns_module_add_undefined(struct kmodns_module *mod, const char *name, bool weak);

/* An empty table for a builder other than the Module.symvers parser. */
struct kmodns_symvers *kmodns_symvers_new_empty(struct kmodns_ctx *ctx);
/* Appends a row; 1 if added, 0 if symbol was already there (the first row stands), -ENOMEM. */
int kmodns_symvers_add(struct kmodns_symvers *sv, const char *symbol, const char *owner,
		       const char *ns, enum kmodns_export_type type, bool has_crc, uint32_t crc);

/* A kernel's compressed payload (xz, zstd, gzip, lz4 legacy) decompressed, by its magic;
 * expected: its decompressed size as the image states it (0: unknown). */
int kmodns_payload_decompress(struct kmodns_ctx *ctx, const char *label, const void *in,
			      size_t in_size, size_t expected, struct kmodns_image *image);

struct kmodns_index;
/* The namespace record of modname in an open modules.dep.bin (label: its directory, for
 * messages); -ENOENT when it has none. */
int kmodns_ns_record_lookup_in(struct kmodns_ctx *ctx, struct kmodns_index *idx, const char *label,
			       const char *modname, struct kmodns_ns_record **record);

/* Is ns a 6.16+ "module:" list of the modules allowed to use its symbols, on this kernel? */
bool kmodns_namespace_is_module_list(const char *ns, unsigned kernel_version);

/* ---- the policy, as the load check asks it ---- */

/* The module a policy is asked about; its traits are read only when a rule needs them. */
struct policy_subject {
	const char *name, *path, *moddir;
	int traits; /* KMODNS_TRAIT_* bits, -1 until known */
	int (*get_traits)(void *data);
	void *data;
};

/* A policy line that decided, as a verdict quotes it. */
struct policy_match {
	enum kmodns_policy_action action;
	const char *ns, *file;
	unsigned line;
	const char *rule;
	bool missing_import; /* the missing-import line, not a namespace rule */
};

/* 1 and *m for the first rule matching s's use of ns, 0 for none, or a negative errno. */
int kmodns_policy_match(const struct kmodns_policy *policy, struct policy_subject *s, const char *ns,
			struct policy_match *m);
/* true and *m when the policy says what a missing import of ns does (not "kernel"). */
bool kmodns_policy_missing_import(const struct kmodns_policy *policy, const char *ns,
				  struct policy_match *m);
