// SPDX-License-Identifier: LGPL-2.1-or-later
/* The module object: one file's namespace facts, read once, then only looked at. */
#include <errno.h>

#include "libkmodns-private.h"

int kmodns_module_add_export(struct kmodns_module *mod, const char *symbol, size_t symbol_len,
			     const char *ns, enum kmodns_export_type type)
{
	struct kmodns_export *e;
	int r = array_reserve((void **)&mod->exports, &mod->exports_capacity, sizeof(*e),
			      mod->n_exports + 1);

	if (r < 0)
		return r;
	e = &mod->exports[mod->n_exports];
	*e = (struct kmodns_export){ .type = type };
	e->symbol = arena_strndup(&mod->strings, symbol, symbol_len);
	e->ns = ns[0] ? arena_strdup(&mod->strings, ns) : "";
	if (e->symbol == NULL || e->ns == NULL)
		return -ENOMEM;
	mod->n_exports++;
	return 0;
}

int kmodns_module_add_import(struct kmodns_module *mod, const char *ns)
{
	int r = strset_add(&mod->imports, ns);

	if (r < 0)
		return r;
	mod->imports_raw++;
	return 0;
}

int kmodns_module_add_modinfo(struct kmodns_module *mod, const char *record)
{
	const char *eq = strchr(record, '=');
	struct modinfo_record *m;
	int r = array_reserve((void **)&mod->modinfo, &mod->modinfo_capacity, sizeof(*m),
			      mod->n_modinfo + 1);

	if (r < 0)
		return r;
	m = &mod->modinfo[mod->n_modinfo];
	m->key = arena_strndup(&mod->strings, record, eq ? (size_t)(eq - record) : strlen(record));
	m->value = eq ? arena_strdup(&mod->strings, eq + 1) : "";
	if (m->key == NULL || m->value == NULL)
		return -ENOMEM;
	mod->n_modinfo++;
	return 0;
}

int kmodns_module_add_version(struct kmodns_module *mod, const char *name, uint32_t crc)
{
	struct version_record *v;
	int r = array_reserve((void **)&mod->versions, &mod->versions_capacity, sizeof(*v),
			      mod->n_versions + 1);

	if (r < 0)
		return r;
	v = &mod->versions[mod->n_versions];
	v->name = arena_strdup(&mod->strings, name);
	v->crc = crc;
	if (v->name == NULL)
		return -ENOMEM;
	mod->n_versions++;
	return 0;
}

int kmodns_module_add_undefined(struct kmodns_module *mod, const char *name, bool weak)
{
	struct kmodns_symbol *s;
	int r = array_reserve((void **)&mod->undefined, &mod->undefined_capacity, sizeof(*s),
			      mod->n_undefined + 1);

	if (r < 0)
		return r;
	s = &mod->undefined[mod->n_undefined];
	*s = (struct kmodns_symbol){ .weak = weak };
	s->name = arena_strdup(&mod->strings, name);
	if (s->name == NULL)
		return -ENOMEM;
	mod->n_undefined++;
	return 0;
}

/* The kernel's name from a path ("drivers/usb/storage/usb-storage.ko.xz", "vmlinux"), by
 * kmod's rule (modname_from_path), in the arena. */
const char *kmodns_name_from_path(struct arena *arena, const char *path)
{
	size_t len = strlen(path);
	char *name = arena_strndup(arena, path, len);

	return name ? modname_from_path(name, len, name) : NULL;
}

struct kmodns_module *kmodns_module_alloc(struct kmodns_ctx *ctx, const char *path)
{
	struct kmodns_module *mod = calloc(1, sizeof(*mod));

	if (mod == NULL)
		return NULL;
	mod->refcount = 1;
	mod->ctx = kmodns_ref(ctx);
	mod->path = arena_strdup(&mod->strings, path);
	if (mod->path == NULL)
		return kmodns_module_unref(mod);
	return mod;
}

int kmodns_module_finish(struct kmodns_module *mod)
{
	int r = 0;

	if (mod->name == NULL) {
		mod->name = kmodns_name_from_path(&mod->strings, mod->path);
	} else {
		char *p = (char *)mod->name;
		for (; *p; p++)
			if (*p == '-')
				*p = '_';
	}
	for (size_t i = 0; i < mod->n_exports && r >= 0; i++) {
		mod->exports[i].owner = mod->exports[i].owner_name = mod->name;
		r = strset_add(&mod->export_namespaces, mod->exports[i].ns);
	}
	if (r < 0)
		return r;
	if (mod->vermagic)
		mod->kernel_version = kmodns_kernel_version_parse(mod->vermagic);
	return 0;
}

/* Signing appends the signature and this marker to the ELF image (inside any compression). */
#define SIGNATURE_MARKER "~Module signature appended~\n"

static bool image_has_signature(const struct kmodns_image *image)
{
	size_t len = strlen(SIGNATURE_MARKER);

	return image->size >= len && memcmp(image->data + image->size - len, SIGNATURE_MARKER, len) == 0;
}

static int module_new(struct kmodns_ctx *ctx, const char *path, const void *data, size_t size,
		      unsigned flags, struct kmodns_module **out)
{
	struct kmodns_module *mod = kmodns_module_alloc(ctx, path);
	struct kmodns_image image = { 0 };
	int r;

	*out = NULL;
	if (mod == NULL)
		return -ENOMEM;
	r = kmodns_image_load(ctx, data ? NULL : path, data, size, path, 0, &image);
	if (r < 0)
		goto fail;
	mod->compression = image.compression;
	mod->signature_appended = image_has_signature(&image);
	r = kmodns_elf_read(mod, &image, flags);
	free(image.data);
	if (r < 0)
		goto fail;
	r = kmodns_module_finish(mod);
	if (r < 0)
		goto fail;
	*out = mod;
	return 0;
fail:
	kmodns_module_unref(mod);
	return r;
}

KMODNS_EXPORT int kmodns_module_new_from_path(struct kmodns_ctx *ctx, const char *path,
					      unsigned flags, struct kmodns_module **mod)
{
	return module_new(ctx, path, NULL, 0, flags, mod);
}

KMODNS_EXPORT int kmodns_module_new_from_memory(struct kmodns_ctx *ctx, const void *data,
						size_t size, const char *name_hint, unsigned flags,
						struct kmodns_module **mod)
{
	static const char empty;

	/* A non-NULL pointer marks "from memory" even for an empty image. */
	return module_new(ctx, name_hint ? name_hint : "(memory)", data ? data : &empty, size,
			  flags, mod);
}

KMODNS_EXPORT int kmodns_file_check_header(struct kmodns_ctx *ctx, const char *path)
{
	struct kmodns_image image = { 0 };
	/* The ELF header is all we look at: decompress no more than the largest one. */
	int r = kmodns_image_load(ctx, path, NULL, 0, path, 64, &image);

	if (r >= 0)
		r = kmodns_elf_check_header(ctx, path, image.data, image.size);
	free(image.data);
	return r;
}

KMODNS_EXPORT struct kmodns_module *kmodns_module_ref(struct kmodns_module *mod)
{
	if (mod)
		mod->refcount++;
	return mod;
}

KMODNS_EXPORT struct kmodns_module *kmodns_module_unref(struct kmodns_module *mod)
{
	if (mod == NULL || --mod->refcount > 0)
		return NULL;
	free(mod->exports);
	free(mod->undefined);
	free(mod->modinfo);
	free(mod->versions);
	strset_release(&mod->imports);
	strset_release(&mod->export_namespaces);
	arena_release(&mod->strings);
	kmodns_unref(mod->ctx);
	free(mod);
	return NULL;
}

KMODNS_EXPORT const char *kmodns_module_get_name(const struct kmodns_module *mod) { return mod->name; }
KMODNS_EXPORT const char *kmodns_module_get_path(const struct kmodns_module *mod) { return mod->path; }
KMODNS_EXPORT const char *kmodns_module_get_vermagic(const struct kmodns_module *mod) { return mod->vermagic; }
KMODNS_EXPORT int kmodns_module_get_elf_class(const struct kmodns_module *mod) { return mod->elf_class; }
KMODNS_EXPORT bool kmodns_module_is_big_endian(const struct kmodns_module *mod) { return mod->big_endian; }

KMODNS_EXPORT enum kmodns_compression kmodns_module_get_compression(const struct kmodns_module *mod)
{
	return mod->compression;
}

KMODNS_EXPORT bool kmodns_module_has_signature(const struct kmodns_module *mod)
{
	return mod->signature_appended;
}

KMODNS_EXPORT bool kmodns_module_is_intree(const struct kmodns_module *mod)
{
	size_t i;

	for (i = 0; i < mod->n_modinfo; i++)
		if (streq(mod->modinfo[i].key, "intree"))
			return streq(mod->modinfo[i].value, "Y");
	return false;
}

KMODNS_EXPORT unsigned kmodns_module_get_kernel_version(const struct kmodns_module *mod)
{
	return mod->kernel_version;
}

KMODNS_EXPORT size_t kmodns_module_get_export_count(const struct kmodns_module *mod)
{
	return mod->n_exports;
}

KMODNS_EXPORT const struct kmodns_export *kmodns_module_get_export(const struct kmodns_module *mod,
								    size_t i)
{
	return i < mod->n_exports ? &mod->exports[i] : NULL;
}

KMODNS_EXPORT size_t kmodns_module_get_export_namespace_count(const struct kmodns_module *mod)
{
	return mod->export_namespaces.count;
}

KMODNS_EXPORT const char *kmodns_module_get_export_namespace(const struct kmodns_module *mod, size_t i)
{
	return i < mod->export_namespaces.count ? mod->export_namespaces.items[i] : NULL;
}

KMODNS_EXPORT size_t kmodns_module_get_import_count(const struct kmodns_module *mod)
{
	return mod->imports.count;
}

KMODNS_EXPORT const char *kmodns_module_get_import(const struct kmodns_module *mod, size_t i)
{
	return i < mod->imports.count ? mod->imports.items[i] : NULL;
}

KMODNS_EXPORT size_t kmodns_module_get_import_raw_count(const struct kmodns_module *mod)
{
	return mod->imports_raw;
}

KMODNS_EXPORT size_t kmodns_module_get_undefined_count(const struct kmodns_module *mod)
{
	return mod->n_undefined;
}

KMODNS_EXPORT const struct kmodns_symbol *kmodns_module_get_undefined(const struct kmodns_module *mod,
								       size_t i)
{
	return i < mod->n_undefined ? &mod->undefined[i] : NULL;
}

KMODNS_EXPORT size_t kmodns_module_get_modinfo_count(const struct kmodns_module *mod)
{
	return mod->n_modinfo;
}

KMODNS_EXPORT const char *kmodns_module_get_modinfo_key(const struct kmodns_module *mod, size_t i)
{
	return i < mod->n_modinfo ? mod->modinfo[i].key : NULL;
}

KMODNS_EXPORT const char *kmodns_module_get_modinfo_value(const struct kmodns_module *mod, size_t i)
{
	return i < mod->n_modinfo ? mod->modinfo[i].value : NULL;
}

KMODNS_EXPORT size_t kmodns_module_get_version_count(const struct kmodns_module *mod)
{
	return mod->n_versions;
}

KMODNS_EXPORT const char *kmodns_module_get_version_symbol(const struct kmodns_module *mod, size_t i)
{
	return i < mod->n_versions ? mod->versions[i].name : NULL;
}

KMODNS_EXPORT uint32_t kmodns_module_get_version_crc(const struct kmodns_module *mod, size_t i)
{
	return i < mod->n_versions ? mod->versions[i].crc : 0;
}

KMODNS_EXPORT const char *kmodns_symbol_get_name(const struct kmodns_symbol *sym) { return sym->name; }
KMODNS_EXPORT bool kmodns_symbol_is_weak(const struct kmodns_symbol *sym) { return sym->weak; }

KMODNS_EXPORT bool kmodns_symbol_get_crc(const struct kmodns_symbol *sym, uint32_t *crc)
{
	if (sym->has_crc && crc)
		*crc = sym->crc;
	return sym->has_crc;
}

/* ---- exports ---- */

static const char *const export_type_names[] = {
	[KMODNS_EXPORT_SYMBOL] = "EXPORT_SYMBOL",
	[KMODNS_EXPORT_SYMBOL_GPL] = "EXPORT_SYMBOL_GPL",
	[KMODNS_EXPORT_SYMBOL_GPL_FUTURE] = "EXPORT_SYMBOL_GPL_FUTURE",
	[KMODNS_EXPORT_UNUSED_SYMBOL] = "EXPORT_UNUSED_SYMBOL",
	[KMODNS_EXPORT_UNUSED_SYMBOL_GPL] = "EXPORT_UNUSED_SYMBOL_GPL",
};

KMODNS_EXPORT const char *kmodns_export_type_to_string(enum kmodns_export_type type)
{
	return (size_t)type < ARRAY_SIZE(export_type_names) ? export_type_names[type] : NULL;
}

KMODNS_EXPORT const char *kmodns_export_get_symbol(const struct kmodns_export *exp) { return exp->symbol; }
KMODNS_EXPORT const char *kmodns_export_get_namespace(const struct kmodns_export *exp) { return exp->ns; }
KMODNS_EXPORT enum kmodns_export_type kmodns_export_get_type(const struct kmodns_export *exp) { return exp->type; }
KMODNS_EXPORT const char *kmodns_export_get_owner(const struct kmodns_export *exp) { return exp->owner; }
KMODNS_EXPORT const char *kmodns_export_get_owner_name(const struct kmodns_export *exp) { return exp->owner_name; }

KMODNS_EXPORT bool kmodns_export_is_gpl(const struct kmodns_export *exp)
{
	return exp->type == KMODNS_EXPORT_SYMBOL_GPL || exp->type == KMODNS_EXPORT_UNUSED_SYMBOL_GPL;
}

KMODNS_EXPORT bool kmodns_export_get_crc(const struct kmodns_export *exp, uint32_t *crc)
{
	if (exp->has_crc && crc)
		*crc = exp->crc;
	return exp->has_crc;
}
