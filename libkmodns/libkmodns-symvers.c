// SPDX-License-Identifier: LGPL-2.1-or-later
/* Module.symvers: the kernel build's list of every export, vmlinux's included. */
#include <errno.h>

#include "libkmodns-private.h"

struct kmodns_symvers {
	struct kmodns_ctx *ctx;
	struct arena strings;
	struct kmodns_export *rows;
	size_t n_rows, capacity;
	struct strset symbols; /* index i names rows[i] */
};

static bool parse_export_type(const char *s, enum kmodns_export_type *type)
{
	enum kmodns_export_type t;

	for (t = KMODNS_EXPORT_SYMBOL; t <= KMODNS_EXPORT_UNUSED_SYMBOL_GPL; t++)
		if (streq(s, kmodns_export_type_to_string(t))) {
			*type = t;
			return true;
		}
	return false;
}

/* Splits line in place on tabs; returns the field count (at most max). */
static size_t split_tabs(char *line, char **fields, size_t max)
{
	size_t n = 0;

	while (n < max) {
		fields[n++] = line;
		line = strchr(line, '\t');
		if (line == NULL)
			break;
		*line++ = '\0';
	}
	return n;
}

static int parse_row(struct kmodns_symvers *sv, char *line)
{
	char *f[6], *end;
	size_t n = split_tabs(line, f, ARRAY_SIZE(f));
	const char *module, *type_s, *ns;
	enum kmodns_export_type type;
	unsigned long crc;
	int r;

	if (n < 4 || n > 5)
		return -EINVAL;
	if (startswith(f[3], "EXPORT_")) {
		module = f[2], type_s = f[3], ns = n == 5 ? f[4] : "";
	} else if (n == 5 && startswith(f[4], "EXPORT_")) {
		/* early 5.4/5.5: the namespace came third */
		ns = f[2], module = f[3], type_s = f[4];
	} else {
		return -EINVAL;
	}
	errno = 0;
	crc = strtoul(f[0], &end, 16);
	if (errno != 0 || *end != '\0' || f[0][0] == '\0' || crc > UINT32_MAX || f[1][0] == '\0' ||
	    !parse_export_type(type_s, &type))
		return -EINVAL;
	r = kmodns_symvers_add(sv, f[1], module, ns, type, true, (uint32_t)crc);
	return r < 0 ? r : 0;
}

struct kmodns_symvers *kmodns_symvers_new_empty(struct kmodns_ctx *ctx)
{
	struct kmodns_symvers *sv = calloc(1, sizeof(*sv));

	if (sv != NULL)
		sv->ctx = kmodns_ref(ctx);
	return sv;
}

int kmodns_symvers_add(struct kmodns_symvers *sv, const char *symbol, const char *owner,
		       const char *ns, enum kmodns_export_type type, bool has_crc, uint32_t crc)
{
	struct kmodns_export *row;
	int r = strset_add(&sv->symbols, symbol);

	if (r <= 0)
		return r; /* 0: a symbol listed twice, the first row stands */
	r = array_reserve((void **)&sv->rows, &sv->capacity, sizeof(*row), sv->n_rows + 1);
	if (r < 0)
		return r;
	row = &sv->rows[sv->n_rows++];
	*row = (struct kmodns_export){ .type = type, .has_crc = has_crc, .crc = crc };
	row->symbol = sv->symbols.items[sv->symbols.count - 1];
	row->owner = arena_strdup(&sv->strings, owner);
	row->owner_name = kmodns_name_from_path(&sv->strings, owner);
	row->ns = ns[0] ? arena_strdup(&sv->strings, ns) : "";
	if (row->owner == NULL || row->owner_name == NULL || row->ns == NULL)
		return -ENOMEM;
	return 1;
}

KMODNS_EXPORT int kmodns_symvers_new_from_file(struct kmodns_ctx *ctx, const char *path,
					       struct kmodns_symvers **out)
{
	_cleanup_free_ char *data = NULL;
	struct kmodns_symvers *sv;
	size_t size, lineno = 0;
	char *p, *end;
	int r;

	*out = NULL;
	r = read_file(path, &data, &size);
	if (r < 0) {
		ERR(ctx, "%s: %s", path, strerror(-r));
		return r;
	}
	if (memchr(data, '\0', size) != NULL) {
		ERR(ctx, "%s: not a Module.symvers (binary data)", path);
		return -EINVAL;
	}
	sv = kmodns_symvers_new_empty(ctx);
	if (sv == NULL)
		return -ENOMEM;
	for (p = data, end = data + size; p < end; p++) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		if (nl == NULL)
			nl = end; /* last line without newline; data has one spare byte */
		*nl = '\0';
		lineno++;
		if (*p != '\0') {
			r = parse_row(sv, p);
			if (r < 0) {
				if (r == -EINVAL)
					ERR(ctx, "%s:%zu: malformed line (expected crc, symbol, module, export type, namespace)",
					    path, lineno);
				kmodns_symvers_unref(sv);
				return r;
			}
		}
		p = nl;
	}
	*out = sv;
	return 0;
}

KMODNS_EXPORT struct kmodns_symvers *kmodns_symvers_unref(struct kmodns_symvers *sv)
{
	if (sv == NULL)
		return NULL;
	free(sv->rows);
	strset_release(&sv->symbols);
	arena_release(&sv->strings);
	kmodns_unref(sv->ctx);
	free(sv);
	return NULL;
}

KMODNS_EXPORT size_t kmodns_symvers_get_count(const struct kmodns_symvers *sv)
{
	return sv->n_rows;
}

KMODNS_EXPORT const struct kmodns_export *kmodns_symvers_get_export(const struct kmodns_symvers *sv,
								     size_t i)
{
	return i < sv->n_rows ? &sv->rows[i] : NULL;
}

KMODNS_EXPORT const struct kmodns_export *kmodns_symvers_find(const struct kmodns_symvers *sv,
							       const char *symbol)
{
	long i = strset_find(&sv->symbols, symbol);

	return i < 0 ? NULL : &sv->rows[i];
}
