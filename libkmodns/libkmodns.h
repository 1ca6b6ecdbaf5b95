/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libkmodns - symbol namespaces of Linux kernel modules.
 *
 * Reads the exports (with namespace and GPL-ness), the imported namespaces and
 * the undefined symbols of module files of every kernel era, reads
 * Module.symvers, and applies the kernel's namespace rule.
 *
 * Every function returning int returns 0 or a positive count on success and a
 * negative errno on failure; details go through the context's log function.
 */
#ifndef LIBKMODNS_H
#define LIBKMODNS_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- context ---------------------------------------------------------- */

struct kmodns_ctx;

typedef void (*kmodns_log_fn)(void *data, int priority, const char *file, int line,
			      const char *fn, const char *format, va_list args);

/* A context may be shared by threads that each read their own modules. */
struct kmodns_ctx *kmodns_new(void);
struct kmodns_ctx *kmodns_ref(struct kmodns_ctx *ctx);
struct kmodns_ctx *kmodns_unref(struct kmodns_ctx *ctx);
/* Messages of at most this syslog priority reach the log function (default LOG_ERR). */
void kmodns_set_log_priority(struct kmodns_ctx *ctx, int priority);
int kmodns_get_log_priority(const struct kmodns_ctx *ctx);
/* NULL fn silences the library (the default: the library never prints by itself). */
void kmodns_set_log_fn(struct kmodns_ctx *ctx, kmodns_log_fn fn, void *data);

/* ---- exports (of a module, or rows of Module.symvers) -------------------- */

enum kmodns_export_type {
	KMODNS_EXPORT_SYMBOL = 0,        /* EXPORT_SYMBOL */
	KMODNS_EXPORT_SYMBOL_GPL,        /* EXPORT_SYMBOL_GPL */
	KMODNS_EXPORT_SYMBOL_GPL_FUTURE, /* __ksymtab_gpl_future, until 5.12 */
	KMODNS_EXPORT_UNUSED_SYMBOL,     /* __ksymtab_unused, until 5.12 */
	KMODNS_EXPORT_UNUSED_SYMBOL_GPL, /* __ksymtab_unused_gpl, until 5.12 */
};

struct kmodns_export;

const char *kmodns_export_get_symbol(const struct kmodns_export *exp);
/* "" for an export without namespace, never NULL. */
const char *kmodns_export_get_namespace(const struct kmodns_export *exp);
enum kmodns_export_type kmodns_export_get_type(const struct kmodns_export *exp);
/* The kernel resolves it only for GPL-compatible modules. */
bool kmodns_export_is_gpl(const struct kmodns_export *exp);
/* The owner as Module.symvers names it ("vmlinux", "drivers/usb/storage/usb-storage");
 * for a module's own exports, the module's name. */
const char *kmodns_export_get_owner(const struct kmodns_export *exp);
/* The kernel's name for the owner: "vmlinux", "usb_storage". */
const char *kmodns_export_get_owner_name(const struct kmodns_export *exp);
/* false when no CRC is known (kernels without MODVERSIONS). */
bool kmodns_export_get_crc(const struct kmodns_export *exp, uint32_t *crc);
/* "EXPORT_SYMBOL", "EXPORT_SYMBOL_GPL", ... as written in Module.symvers. */
const char *kmodns_export_type_to_string(enum kmodns_export_type type);

/* ---- one module file ---------------------------------------------------- */

struct kmodns_module;

enum kmodns_compression {
	KMODNS_COMPRESSION_NONE = 0,
	KMODNS_COMPRESSION_XZ,
	KMODNS_COMPRESSION_ZSTD,
	KMODNS_COMPRESSION_GZIP,
};

enum kmodns_module_flags {
	/* Read exports from the relocations of __ksymtab* even when the local
	 * symbols that name them are present (the fallback method, for checks). */
	KMODNS_MODULE_EXPORTS_BY_RELOCATIONS = 1 << 0,
};

/* Opens, decompresses (by magic, not by name) and reads a module file. */
int kmodns_module_new_from_path(struct kmodns_ctx *ctx, const char *path, unsigned flags,
				struct kmodns_module **mod);
/* Same, from a module image in memory (copied); name_hint names it in messages. */
int kmodns_module_new_from_memory(struct kmodns_ctx *ctx, const void *data, size_t size,
				  const char *name_hint, unsigned flags,
				  struct kmodns_module **mod);
/*
 * Checks only the ELF header of a module file (decompressing its first bytes):
 * cheap, for callers about to hand the file to a reader that trusts it
 * (libkmod 30 aborts on an out-of-range section name index).
 */
int kmodns_file_check_header(struct kmodns_ctx *ctx, const char *path);
struct kmodns_module *kmodns_module_ref(struct kmodns_module *mod);
struct kmodns_module *kmodns_module_unref(struct kmodns_module *mod);

/* The kernel's name for it: .modinfo "name", else from the file name; '-' becomes '_'. */
const char *kmodns_module_get_name(const struct kmodns_module *mod);
const char *kmodns_module_get_path(const struct kmodns_module *mod);
enum kmodns_compression kmodns_module_get_compression(const struct kmodns_module *mod);
const char *kmodns_compression_to_string(enum kmodns_compression compression);
/* 32 or 64. */
int kmodns_module_get_elf_class(const struct kmodns_module *mod);
bool kmodns_module_is_big_endian(const struct kmodns_module *mod);
/* .modinfo "vermagic", or NULL. */
const char *kmodns_module_get_vermagic(const struct kmodns_module *mod);
/* KMODNS_KERNEL_VERSION() of the vermagic, 0 when unknown. */
unsigned kmodns_module_get_kernel_version(const struct kmodns_module *mod);
/* Whether the (decompressed) file ends in the marker of an appended signature; it is not verified. */
bool kmodns_module_has_signature(const struct kmodns_module *mod);
/* .modinfo "intree=Y": built with the kernel's own tree, not out of tree. */
bool kmodns_module_is_intree(const struct kmodns_module *mod);

size_t kmodns_module_get_export_count(const struct kmodns_module *mod);
const struct kmodns_export *kmodns_module_get_export(const struct kmodns_module *mod, size_t i);
/* The namespaces of the exports, deduplicated, in first-seen order; "" stands for the
 * exports without a namespace and is listed only when there are such. */
size_t kmodns_module_get_export_namespace_count(const struct kmodns_module *mod);
const char *kmodns_module_get_export_namespace(const struct kmodns_module *mod, size_t i);

/* Imported namespaces: deduplicated, in first-seen order. */
size_t kmodns_module_get_import_count(const struct kmodns_module *mod);
const char *kmodns_module_get_import(const struct kmodns_module *mod, size_t i);
/* How many import records the module holds before deduplication. */
size_t kmodns_module_get_import_raw_count(const struct kmodns_module *mod);

/* The .modinfo records in file order ("alias", "softdep", ...); value "" when a record has no '='. */
size_t kmodns_module_get_modinfo_count(const struct kmodns_module *mod);
const char *kmodns_module_get_modinfo_key(const struct kmodns_module *mod, size_t i);
const char *kmodns_module_get_modinfo_value(const struct kmodns_module *mod, size_t i);

/* The module's symbol versions (__versions, or 6.14+'s extended modversions) in file order:
 * symbols and the CRCs it was built against; entries like module_layout name no undefined symbol. */
size_t kmodns_module_get_version_count(const struct kmodns_module *mod);
const char *kmodns_module_get_version_symbol(const struct kmodns_module *mod, size_t i);
uint32_t kmodns_module_get_version_crc(const struct kmodns_module *mod, size_t i);

/* Undefined symbols the module needs resolved, in symbol-table order. */
struct kmodns_symbol;
size_t kmodns_module_get_undefined_count(const struct kmodns_module *mod);
const struct kmodns_symbol *kmodns_module_get_undefined(const struct kmodns_module *mod, size_t i);
const char *kmodns_symbol_get_name(const struct kmodns_symbol *sym);
bool kmodns_symbol_is_weak(const struct kmodns_symbol *sym);
/* The CRC the module expects (__versions), false when it records none. */
bool kmodns_symbol_get_crc(const struct kmodns_symbol *sym, uint32_t *crc);

/* ---- Module.symvers ----------------------------------------------------- */

struct kmodns_symvers;

/* Both column orders: "crc sym module type [ns]" and early 5.4's "crc sym ns module type". */
int kmodns_symvers_new_from_file(struct kmodns_ctx *ctx, const char *path,
				 struct kmodns_symvers **symvers);
/* vmlinux's exports read from a kernel image: an x86 bzImage (payload xz, zstd, gzip or lz4)
 * or a vmlinux ELF. Rows as Module.symvers's vmlinux rows, owner "vmlinux"; a CRC only when
 * the kernel has __kcrctab (CONFIG_MODVERSIONS). */
int kmodns_symvers_new_from_vmlinuz(struct kmodns_ctx *ctx, const char *path,
				    struct kmodns_symvers **symvers);
struct kmodns_symvers *kmodns_symvers_unref(struct kmodns_symvers *symvers);
size_t kmodns_symvers_get_count(const struct kmodns_symvers *symvers);
const struct kmodns_export *kmodns_symvers_get_export(const struct kmodns_symvers *symvers,
						       size_t i);
/* The row exporting symbol, or NULL. */
const struct kmodns_export *kmodns_symvers_find(const struct kmodns_symvers *symvers,
						const char *symbol);

/* ---- the kernel's namespace rule ----------------------------------------- */

#define KMODNS_KERNEL_VERSION(a, b, c) (((unsigned)(a) << 16) + ((unsigned)(b) << 8) + (unsigned)(c))
/* Parses "6.12.41+deb13-amd64 SMP ..." (a vermagic or uname -r); 0 when it cannot. */
unsigned kmodns_kernel_version_parse(const char *release);

enum kmodns_verdict {
	KMODNS_ALLOWED_NO_NAMESPACE = 0, /* the symbol has no namespace */
	KMODNS_ALLOWED_IMPORTED,         /* the module imports the namespace */
	KMODNS_ALLOWED_MODULE_PATTERN,   /* 6.16+: "module:" pattern matches the module */
	KMODNS_REFUSED_MISSING_IMPORT,   /* finit_module fails with EINVAL */
	KMODNS_REFUSED_MODULE_IMPORT,    /* 6.16+: imports "module:..."; finit_module fails with EPERM */
};

/*
 * May module `module_name`, importing `imports`, use a symbol of namespace `ns`
 * on a kernel of `kernel_version` (KMODNS_KERNEL_VERSION; 0 = newest rules)?
 * This is the one place the rule lives.
 */
enum kmodns_verdict kmodns_namespace_check(const char *module_name, const char *const *imports,
					   size_t n_imports, const char *ns,
					   unsigned kernel_version);
/* May a module import `ns` at all (KMODNS_REFUSED_MODULE_IMPORT for "module:" on 6.16+)? */
enum kmodns_verdict kmodns_import_check(const char *ns, unsigned kernel_version);
bool kmodns_verdict_is_refused(enum kmodns_verdict verdict);
/* Does the "module:" pattern list (without the prefix) name module_name? */
bool kmodns_module_pattern_matches(const char *patterns, const char *module_name);

/* ---- what a module requires ---------------------------------------------- */

/* Finds the export that resolves symbol (a Module.symvers row, another module's export), or NULL. */
typedef const struct kmodns_export *(*kmodns_export_lookup_fn)(void *data, const char *symbol);

/*
 * The namespaces a module's undefined symbols need, one entry per namespace in
 * first-use order, each with the export that first needed it and the kernel's
 * verdict for this module. Symbols lookup cannot resolve are counted, not guessed.
 */
struct kmodns_requires;
int kmodns_module_get_requires(const struct kmodns_module *mod, kmodns_export_lookup_fn lookup,
			       void *data, struct kmodns_requires **requires);
struct kmodns_requires *kmodns_requires_unref(struct kmodns_requires *requires);
size_t kmodns_requires_get_count(const struct kmodns_requires *requires);
const char *kmodns_requires_get_namespace(const struct kmodns_requires *requires, size_t i);
/* The export that first needed namespace i: its symbol and owner. */
const struct kmodns_export *kmodns_requires_get_export(const struct kmodns_requires *requires,
							size_t i);
enum kmodns_verdict kmodns_requires_get_verdict(const struct kmodns_requires *requires, size_t i);
/* Undefined symbols lookup did not find (weak ones excluded). */
size_t kmodns_requires_get_unresolved_count(const struct kmodns_requires *requires);
/* Imports no required namespace uses (kernel-wise harmless, often stale). */
size_t kmodns_requires_get_unused_import_count(const struct kmodns_requires *requires);
const char *kmodns_requires_get_unused_import(const struct kmodns_requires *requires, size_t i);

/* ---- the namespace record depmod stores in modules.dep.bin ------------------- */

/*
 * depmod keeps, for each module, a record of its namespaces as a second value
 * of its modules.dep.bin key, which stock libkmod never reads: modprobe gets
 * imports, requirements and verdicts with one lookup and no ELF parsing.
 */
struct kmodns_ns_record;
/* The record text depmod stores for mod (caller frees); requires may be NULL. */
int kmodns_ns_record_format(const struct kmodns_module *mod, const struct kmodns_requires *requires,
			    bool vmlinux_known, char **text);
/* Decodes a record text: -EBADMSG when it is not one. */
int kmodns_ns_record_new_from_text(const char *text, struct kmodns_ns_record **record);
/* The record of module modname in dirname/modules.dep.bin: -ENOENT when there is none
 * (no index, no such module, or an index written by a depmod that keeps no records). */
int kmodns_ns_record_lookup(struct kmodns_ctx *ctx, const char *dirname, const char *modname,
			    struct kmodns_ns_record **record);
struct kmodns_ns_record *kmodns_ns_record_unref(struct kmodns_ns_record *record);
/* false: depmod had no Module.symvers, so namespaces of vmlinux's exports are not in it. */
bool kmodns_ns_record_vmlinux_known(const struct kmodns_ns_record *record);
size_t kmodns_ns_record_get_import_count(const struct kmodns_ns_record *record);
const char *kmodns_ns_record_get_import(const struct kmodns_ns_record *record, size_t i);
/* KMODNS_REFUSED_MODULE_IMPORT when the module's kernel refuses import i, else KMODNS_ALLOWED_IMPORTED. */
enum kmodns_verdict kmodns_ns_record_get_import_verdict(const struct kmodns_ns_record *record,
							size_t i);
size_t kmodns_ns_record_get_export_count(const struct kmodns_ns_record *record);
const char *kmodns_ns_record_get_export(const struct kmodns_ns_record *record, size_t i);
/* Imports no requirement uses; with vmlinux unknown, also those only vmlinux would use. */
size_t kmodns_ns_record_get_unused_count(const struct kmodns_ns_record *record);
const char *kmodns_ns_record_get_unused(const struct kmodns_ns_record *record, size_t i);
size_t kmodns_ns_record_get_require_count(const struct kmodns_ns_record *record);
const char *kmodns_ns_record_get_require_namespace(const struct kmodns_ns_record *record, size_t i);
const char *kmodns_ns_record_get_require_exporter(const struct kmodns_ns_record *record, size_t i);
const char *kmodns_ns_record_get_require_symbol(const struct kmodns_ns_record *record, size_t i);
enum kmodns_verdict kmodns_ns_record_get_require_verdict(const struct kmodns_ns_record *record,
							 size_t i);
/* As kmodns_requires_get_unresolved_count() when depmod made the record. */
size_t kmodns_ns_record_get_unresolved_count(const struct kmodns_ns_record *record);
enum kmodns_trait {
	KMODNS_TRAIT_INTREE = 1 << 0, /* .modinfo intree=Y */
	KMODNS_TRAIT_SIGNED = 1 << 1, /* a signature is appended (not verified) */
};
/* KMODNS_TRAIT_* bits, or -1 for a record of a depmod that did not store them. */
int kmodns_ns_record_get_traits(const struct kmodns_ns_record *record);


/* ---- the admin's policy (kmodns.d(5)) ------------------------------------------------ */

/*
 * Who may use which namespace, beyond what the kernel asks: per namespace glob, rules on
 * the module's name, tree (in-tree or not), signature and directory; and what a missing
 * import does. Malformed lines are reported through the log and skipped: the rest applies.
 */
struct kmodns_policy;
enum kmodns_policy_action {
	KMODNS_POLICY_ALLOW = 0,
	KMODNS_POLICY_WARN,
	KMODNS_POLICY_REFUSE,
	KMODNS_POLICY_KERNEL, /* missing-import only: what the target kernel does */
};
/* The *.conf files of ROOT/etc/kmodns.d, ROOT/run/kmodns.d, ROOT/usr/lib/kmodns.d (root NULL:
 * the system's); a file not owned by root or writable by group or others is an error, ignored. */
int kmodns_policy_new_installed(struct kmodns_ctx *ctx, const char *root, struct kmodns_policy **policy);
/* Only the files named, whoever owns them. */
int kmodns_policy_new_from_files(struct kmodns_ctx *ctx, const char *const *paths, size_t n_paths,
				 struct kmodns_policy **policy);
struct kmodns_policy *kmodns_policy_ref(struct kmodns_policy *policy);
struct kmodns_policy *kmodns_policy_unref(struct kmodns_policy *policy);
/* Lines and files rejected while reading (each reported through the log). */
size_t kmodns_policy_get_error_count(const struct kmodns_policy *policy);
/* The files read, in the order their rules apply. */
size_t kmodns_policy_get_file_count(const struct kmodns_policy *policy);
const char *kmodns_policy_get_file(const struct kmodns_policy *policy, size_t i);
enum kmodns_policy_action kmodns_policy_get_missing_import(const struct kmodns_policy *policy);
size_t kmodns_policy_get_rule_count(const struct kmodns_policy *policy);
/* Rule i: its namespace glob, its line as written (words joined by one space), where it is. */
const char *kmodns_policy_rule_get_namespace(const struct kmodns_policy *policy, size_t i);
const char *kmodns_policy_rule_get_text(const struct kmodns_policy *policy, size_t i);
const char *kmodns_policy_rule_get_file(const struct kmodns_policy *policy, size_t i);
unsigned kmodns_policy_rule_get_line(const struct kmodns_policy *policy, size_t i);
/* The module globs of rule i's module= and module!= conditions ('-' read as '_'). */
size_t kmodns_policy_rule_get_module_count(const struct kmodns_policy *policy, size_t i);
const char *kmodns_policy_rule_get_module(const struct kmodns_policy *policy, size_t i, size_t j);
/* "allow", "warn", "refuse", "kernel". */
const char *kmodns_policy_action_to_string(enum kmodns_policy_action action);

/* ---- the load check: what a target kernel will say to a module ----------------- */

/*
 * The kernel a module is about to be loaded into: its release decides the rule
 * (6.16's "module:" namespaces, 6.13's string imports), its config whether a
 * missing import is refused or only warned about, and its module directory
 * holds depmod's namespace records.
 */
struct kmodns_kernel;
/* release: the target's `uname -r`; dirname: its module directory (/lib/modules/RELEASE). */
int kmodns_kernel_new(struct kmodns_ctx *ctx, const char *release, const char *dirname,
		      struct kmodns_kernel **kernel);
struct kmodns_kernel *kmodns_kernel_unref(struct kmodns_kernel *kernel);
/* KMODNS_KERNEL_VERSION() of the release; 0 when it names no kernel with namespaces (unparsed,
 * or older than 5.4, as test trees are): then each module's own vermagic decides. */
unsigned kmodns_kernel_get_version(const struct kmodns_kernel *kernel);
/* 1 when CONFIG_MODULE_ALLOW_MISSING_NAMESPACE_IMPORTS=y (the kernel only warns), 0 when not,
 * -ENOENT when no config was found (ROOT/boot/config-RELEASE for a DIR of ROOT/lib/modules/RELEASE,
 * DIR/config, /proc/config.gz of the running kernel). Read once, on the first call. */
int kmodns_kernel_allows_missing_imports(struct kmodns_kernel *kernel);

/* The policy the kernel's checks also apply from now on (NULL: none; the kernel takes a reference). */
void kmodns_kernel_set_policy(struct kmodns_kernel *kernel, struct kmodns_policy *policy);
/*
 * The policy read by fn(ctx, data, &policy) when a check first needs one, in place of a policy
 * set before: a policy line speaks to a namespace, so a load set that uses none never reads it
 * (modprobe's common case). An error of fn fails the check of the whole load set, and the next
 * check calls fn again.
 */
typedef int (*kmodns_policy_reader_fn)(struct kmodns_ctx *ctx, void *data, struct kmodns_policy **policy);
void kmodns_kernel_set_policy_reader(struct kmodns_kernel *kernel, kmodns_policy_reader_fn fn, void *data);

enum kmodns_check_flags {
	/* Judge from the module file even when depmod's record is current (insmod). */
	KMODNS_CHECK_READ_FILE = 1 << 0,
};

enum kmodns_load_status {
	KMODNS_LOAD_ALLOWED = 0, /* the namespace rule lets it load */
	KMODNS_LOAD_WARNED,      /* missing import, but the kernel only warns (config) */
	KMODNS_LOAD_REFUSED,     /* finit_module would fail: EINVAL, or EPERM for a "module:" import */
};

struct kmodns_load_verdict;
/*
 * Judges module `name` (the kernel's name for it) at `path` by kernel's rule: from its
 * namespace record in modules.dep.bin when that is at least as new as the file, else from
 * the file itself, its symbols resolved with build/Module.symvers and the tree's modules.
 */
int kmodns_kernel_check_module(struct kmodns_kernel *kernel, const char *name, const char *path,
			       unsigned flags, struct kmodns_load_verdict **verdict);
/*
 * Judges a whole load set before any of it is loaded: modules names[i] at paths[i], in load
 * order. verdicts[i] gets each verdict, or NULL for a module whose file could not be read
 * (logged as a warning and left to the kernel). Returns how many are refused — a loader
 * loads nothing of the set unless it is 0 — or -ENOMEM.
 */
int kmodns_kernel_check_load_set(struct kmodns_kernel *kernel, const char *const *names,
				 const char *const *paths, size_t count, unsigned flags,
				 struct kmodns_load_verdict **verdicts);
/* The same judgement of a record already in hand (modinfo's, made with -E's exports). */
int kmodns_kernel_check_record(struct kmodns_kernel *kernel, const char *name,
			       const struct kmodns_ns_record *record,
			       struct kmodns_load_verdict **verdict);
struct kmodns_load_verdict *kmodns_load_verdict_unref(struct kmodns_load_verdict *verdict);
enum kmodns_load_status kmodns_load_verdict_get_status(const struct kmodns_load_verdict *verdict);
const char *kmodns_load_verdict_get_module(const struct kmodns_load_verdict *verdict);
/* The first problem, when the status is not ALLOWED: the rule's verdict
 * (KMODNS_REFUSED_MISSING_IMPORT or KMODNS_REFUSED_MODULE_IMPORT), its namespace, and for a
 * missing import the symbol and its exporter ("vmlinux" or a module name); else NULL. */
enum kmodns_verdict kmodns_load_verdict_get_reason(const struct kmodns_load_verdict *verdict);
const char *kmodns_load_verdict_get_namespace(const struct kmodns_load_verdict *verdict);
const char *kmodns_load_verdict_get_symbol(const struct kmodns_load_verdict *verdict);
const char *kmodns_load_verdict_get_exporter(const struct kmodns_load_verdict *verdict);
/* How many namespaces of the module the rule refuses (0 when allowed). */
size_t kmodns_load_verdict_get_problem_count(const struct kmodns_load_verdict *verdict);
/* false: the namespaces of vmlinux's exports were unknown, those symbols are left to the kernel. */
bool kmodns_load_verdict_vmlinux_known(const struct kmodns_load_verdict *verdict);
/* true: judged from depmod's record; false: from the module file. */
bool kmodns_load_verdict_from_record(const struct kmodns_load_verdict *verdict);
/* The namespaces the module imports. */
size_t kmodns_load_verdict_get_import_count(const struct kmodns_load_verdict *verdict);
const char *kmodns_load_verdict_get_import(const struct kmodns_load_verdict *verdict, size_t i);
/*
 * What the module needs, refused ones first: a namespace, the symbol that needs it and its
 * exporter, and the kernel rule's verdict; an import the kernel refuses has no symbol (NULL).
 */
size_t kmodns_load_verdict_get_requirement_count(const struct kmodns_load_verdict *verdict);
const char *kmodns_load_verdict_get_requirement_namespace(const struct kmodns_load_verdict *verdict, size_t i);
const char *kmodns_load_verdict_get_requirement_symbol(const struct kmodns_load_verdict *verdict, size_t i);
const char *kmodns_load_verdict_get_requirement_exporter(const struct kmodns_load_verdict *verdict, size_t i);
enum kmodns_verdict kmodns_load_verdict_get_requirement_verdict(const struct kmodns_load_verdict *verdict,
								size_t i);
/* KMODNS_TRAIT_* bits of the module, or -1 when they were not read (old record, no rule asked). */
int kmodns_load_verdict_get_traits(const struct kmodns_load_verdict *verdict);
/*
 * The policy lines that matched, one per namespace the module uses that a line spoke to
 * (a missing-import line included): namespace, action, file, line number, the line's text.
 */
size_t kmodns_load_verdict_get_policy_match_count(const struct kmodns_load_verdict *verdict);
const char *kmodns_load_verdict_get_policy_match_namespace(const struct kmodns_load_verdict *verdict, size_t i);
enum kmodns_policy_action kmodns_load_verdict_get_policy_match_action(const struct kmodns_load_verdict *verdict,
								      size_t i);
const char *kmodns_load_verdict_get_policy_match_file(const struct kmodns_load_verdict *verdict, size_t i);
unsigned kmodns_load_verdict_get_policy_match_line(const struct kmodns_load_verdict *verdict, size_t i);
const char *kmodns_load_verdict_get_policy_match_rule(const struct kmodns_load_verdict *verdict, size_t i);
/* The index of the match that decided the status (warned or refused by the policy), or -1
 * when the kernel's rule decided alone. */
long kmodns_load_verdict_get_policy_decision(const struct kmodns_load_verdict *verdict);
/*
 * One line without the module's name in front, for "could not insert 'M': it ...": what the
 * module does and what to change ("uses S from namespace N (exported by E) but does not
 * import it; add MODULE_IMPORT_NS("N") to its source"), or, when allowed, why
 * ("allowed: N imported"). The caller frees it; NULL without memory.
 */
char *kmodns_load_verdict_describe(const struct kmodns_load_verdict *verdict);

#ifdef __cplusplus
}
#endif
#endif
