// SPDX-License-Identifier: LGPL-2.1-or-later
/* A module's undefined symbols, resolved to exports, grouped by namespace, judged by the rule. */
#include <errno.h>

#include "libkmodns-private.h"

struct requirement {
	const struct kmodns_export *export;
	enum kmodns_verdict verdict;
};

struct kmodns_requires {
	struct strset namespaces; /* index i describes items[i] */
	struct requirement *items;
	size_t capacity;
	size_t unresolved;
	struct strset unused_imports;
};

KMODNS_EXPORT int kmodns_module_get_requires(const struct kmodns_module *mod,
					     kmodns_export_lookup_fn lookup, void *data,
					     struct kmodns_requires **out)
{
	struct kmodns_requires *req = calloc(1, sizeof(*req));
	size_t i;
	int r = 0;

	*out = NULL;
	if (req == NULL)
		return -ENOMEM;
	for (i = 0; i < mod->n_undefined && r >= 0; i++) {
		const struct kmodns_symbol *sym = &mod->undefined[i];
		const struct kmodns_export *exp = lookup(data, sym->name);

		if (exp == NULL) {
			req->unresolved += !sym->weak;
			continue;
		}
		if (exp->ns[0] == '\0')
			continue;
		r = strset_add(&req->namespaces, exp->ns);
		if (r <= 0)
			continue;
		r = array_reserve((void **)&req->items, &req->capacity, sizeof(*req->items),
				  req->namespaces.count);
		if (r < 0)
			break;
		req->items[req->namespaces.count - 1] = (struct requirement){
			.export = exp,
			.verdict = kmodns_namespace_check(mod->name, (const char *const *)mod->imports.items,
							  mod->imports.count, exp->ns, mod->kernel_version),
		};
	}
	for (i = 0; i < mod->imports.count && r >= 0; i++)
		if (strset_find(&req->namespaces, mod->imports.items[i]) < 0)
			r = strset_add(&req->unused_imports, mod->imports.items[i]);
	if (r < 0) {
		kmodns_requires_unref(req);
		return r;
	}
	*out = req;
	return 0;
}

KMODNS_EXPORT struct kmodns_requires *kmodns_requires_unref(struct kmodns_requires *req)
{
	if (req == NULL)
		return NULL;
	strset_release(&req->namespaces);
	strset_release(&req->unused_imports);
	free(req->items);
	free(req);
	return NULL;
}

KMODNS_EXPORT size_t kmodns_requires_get_count(const struct kmodns_requires *req)
{
	return req->namespaces.count;
}

KMODNS_EXPORT const char *kmodns_requires_get_namespace(const struct kmodns_requires *req, size_t i)
{
	return i < req->namespaces.count ? req->namespaces.items[i] : NULL;
}

KMODNS_EXPORT const struct kmodns_export *kmodns_requires_get_export(const struct kmodns_requires *req,
								      size_t i)
{
	return i < req->namespaces.count ? req->items[i].export : NULL;
}

KMODNS_EXPORT enum kmodns_verdict kmodns_requires_get_verdict(const struct kmodns_requires *req,
							      size_t i)
{
	return i < req->namespaces.count ? req->items[i].verdict : KMODNS_ALLOWED_NO_NAMESPACE;
}

KMODNS_EXPORT size_t kmodns_requires_get_unresolved_count(const struct kmodns_requires *req)
{
	return req->unresolved;
}

KMODNS_EXPORT size_t kmodns_requires_get_unused_import_count(const struct kmodns_requires *req)
{
	return req->unused_imports.count;
}

KMODNS_EXPORT const char *kmodns_requires_get_unused_import(const struct kmodns_requires *req,
							     size_t i)
{
	return i < req->unused_imports.count ? req->unused_imports.items[i] : NULL;
}
