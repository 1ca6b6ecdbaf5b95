// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The namespace record: what depmod learned about a module's namespaces,
 * stored as a second value of the module's modules.dep.bin key, after the
 * real dependency line and with a larger priority, where stock libkmod never
 * looks. One lookup gives modprobe the module's imports and requirements
 * without opening the module.
 *
 * Text (7-bit ASCII, fields separated by ' '):
 *   kmodns-ns/1 vmlinux=known|unknown unresolved=N import=NS[,VERDICT]... export=NS...
 *   require=NS,EXPORTER,SYMBOL,VERDICT... unused=NS... traits=intree,signed|-
 * where every name is percent-encoded outside [A-Za-z0-9_.:*+/-] (so ',',
 * ' ', '%' and bytes >= 0x80 never appear raw). An import carries a verdict
 * only when its kernel refuses it, so the import of any loadable module reads
 * the same as in records written before imports had verdicts. traits= (what a policy
 * may ask of a module) is absent from records of earlier depmods: then they are unknown.
 */
#include <errno.h>

#include "libkmodns-private.h"
#include "libkmodns-index.h"

#define RECORD_MAGIC "kmodns-ns/1"

static const char *const verdict_names[] = {
	[KMODNS_ALLOWED_NO_NAMESPACE] = "none",
	[KMODNS_ALLOWED_IMPORTED] = "imported",
	[KMODNS_ALLOWED_MODULE_PATTERN] = "pattern",
	[KMODNS_REFUSED_MISSING_IMPORT] = "missing",
	[KMODNS_REFUSED_MODULE_IMPORT] = "module-import",
};

static bool plain_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       strchr("_.:*+/-", c) != NULL;
}

static void put_encoded(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (plain_char(c))
			fputc(c, f);
		else
			fprintf(f, "%%%02X", c);
	}
}

KMODNS_EXPORT int kmodns_ns_record_format(const struct kmodns_module *mod,
					  const struct kmodns_requires *req, bool vmlinux_known,
					  char **text)
{
	unsigned kernel_version = kmodns_module_get_kernel_version(mod);
	char *buf = NULL;
	size_t len = 0, i;
	FILE *f = open_memstream(&buf, &len);

	if (f == NULL)
		return -ENOMEM;
	fprintf(f, "%s vmlinux=%s", RECORD_MAGIC, vmlinux_known ? "known" : "unknown");
	if (req)
		fprintf(f, " unresolved=%zu", kmodns_requires_get_unresolved_count(req));
	for (i = 0; i < kmodns_module_get_import_count(mod); i++) {
		const char *ns = kmodns_module_get_import(mod, i);
		enum kmodns_verdict verdict = kmodns_import_check(ns, kernel_version);
		fputs(" import=", f);
		put_encoded(f, ns);
		if (verdict != KMODNS_ALLOWED_IMPORTED)
			fprintf(f, ",%s", verdict_names[verdict]);
	}
	for (i = 0; i < kmodns_module_get_export_namespace_count(mod); i++) {
		const char *ns = kmodns_module_get_export_namespace(mod, i);
		if (ns[0] == '\0')
			continue;
		fputs(" export=", f);
		put_encoded(f, ns);
	}
	for (i = 0; req && i < kmodns_requires_get_count(req); i++) {
		const struct kmodns_export *e = kmodns_requires_get_export(req, i);
		fputs(" require=", f);
		put_encoded(f, kmodns_requires_get_namespace(req, i));
		fputc(',', f);
		put_encoded(f, e->owner_name);
		fputc(',', f);
		put_encoded(f, e->symbol);
		fprintf(f, ",%s", verdict_names[kmodns_requires_get_verdict(req, i)]);
	}
	for (i = 0; req && i < kmodns_requires_get_unused_import_count(req); i++) {
		fputs(" unused=", f);
		put_encoded(f, kmodns_requires_get_unused_import(req, i));
	}
	fputs(" traits=", f);
	if (kmodns_module_is_intree(mod) || kmodns_module_has_signature(mod))
		fprintf(f, "%s%s%s", kmodns_module_is_intree(mod) ? "intree" : "",
			kmodns_module_is_intree(mod) && kmodns_module_has_signature(mod) ? "," : "",
			kmodns_module_has_signature(mod) ? "signed" : "");
	else
		fputc('-', f);
	if (memstream_close(f, &buf) < 0)
		return -ENOMEM;
	*text = buf;
	return 0;
}

/* ---- reading it back --------------------------------------------------------- */

struct requirement_record {
	const char *ns, *exporter, *symbol;
	enum kmodns_verdict verdict;
};

struct kmodns_ns_record {
	struct arena strings;
	bool vmlinux_known;
	int traits; /* KMODNS_TRAIT_* bits, -1 when the record has none */
	size_t unresolved;
	const char **imports, **exports, **unused;
	size_t n_imports, n_exports, n_unused, cap_imports, cap_exports, cap_unused;
	enum kmodns_verdict *import_verdicts; /* index i describes imports[i] */
	size_t cap_import_verdicts;
	struct requirement_record *requires;
	size_t n_requires, cap_requires;
};

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 :
	       c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Decodes s[0..len) into the arena; NULL for a bad escape. */
static const char *decode(struct arena *a, const char *s, size_t len)
{
	char *out = arena_strndup(a, s, len), *q = out;
	size_t i;

	if (out == NULL)
		return NULL;
	for (i = 0; i < len; i++) {
		if (s[i] != '%') {
			*q++ = s[i];
			continue;
		}
		if (i + 2 >= len || hexval(s[i + 1]) < 0 || hexval(s[i + 2]) < 0 ||
		    (hexval(s[i + 1]) == 0 && hexval(s[i + 2]) == 0))
			return NULL;
		*q++ = (char)(hexval(s[i + 1]) * 16 + hexval(s[i + 2]));
		i += 2;
	}
	*q = '\0';
	return out;
}

static int push_name(struct kmodns_ns_record *rec, const char ***list, size_t *n, size_t *cap,
		     const char *s, size_t len)
{
	const char *name = decode(&rec->strings, s, len);

	if (name == NULL)
		return -EBADMSG;
	if (array_reserve((void **)list, cap, sizeof(char *), *n + 1) < 0)
		return -ENOMEM;
	(*list)[(*n)++] = name;
	return 0;
}

/* The verdict named s[0..len), or -EBADMSG. */
static int parse_verdict(const char *s, size_t len)
{
	size_t v;

	for (v = 0; v < ARRAY_SIZE(verdict_names); v++)
		if (strlen(verdict_names[v]) == len && memcmp(verdict_names[v], s, len) == 0)
			return (int)v;
	return -EBADMSG;
}

/* NS or NS,VERDICT: without a verdict the import is allowed. */
static int parse_import(struct kmodns_ns_record *rec, const char *s, size_t len)
{
	const char *comma = memchr(s, ',', len);
	int verdict = KMODNS_ALLOWED_IMPORTED;
	int r;

	if (comma != NULL) {
		verdict = parse_verdict(comma + 1, (size_t)(s + len - comma - 1));
		if (verdict != KMODNS_ALLOWED_IMPORTED && verdict != KMODNS_REFUSED_MODULE_IMPORT)
			return -EBADMSG;
		len = (size_t)(comma - s);
	}
	if (array_reserve((void **)&rec->import_verdicts, &rec->cap_import_verdicts,
			  sizeof(*rec->import_verdicts), rec->n_imports + 1) < 0)
		return -ENOMEM;
	r = push_name(rec, &rec->imports, &rec->n_imports, &rec->cap_imports, s, len);
	if (r >= 0)
		rec->import_verdicts[rec->n_imports - 1] = (enum kmodns_verdict)verdict;
	return r;
}

static int parse_count(const char *s, size_t len, size_t *count)
{
	size_t i, n = 0;

	if (len == 0 || len > 9)
		return -EBADMSG;
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EBADMSG;
		n = n * 10 + (size_t)(s[i] - '0');
	}
	*count = n;
	return 0;
}

static int parse_require(struct kmodns_ns_record *rec, const char *s, size_t len)
{
	const char *parts[4], *end = s + len, *p = s;
	size_t n = 0, plen[4];
	struct requirement_record *rr;
	int v;

	while (n < 4) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		const char *stop = comma && n < 3 ? comma : end;
		parts[n] = p;
		plen[n++] = (size_t)(stop - p);
		if (stop == end)
			break;
		p = stop + 1;
	}
	if (n != 4 || array_reserve((void **)&rec->requires, &rec->cap_requires, sizeof(*rr),
				    rec->n_requires + 1) < 0)
		return n != 4 ? -EBADMSG : -ENOMEM;
	rr = &rec->requires[rec->n_requires];
	rr->ns = decode(&rec->strings, parts[0], plen[0]);
	rr->exporter = decode(&rec->strings, parts[1], plen[1]);
	rr->symbol = decode(&rec->strings, parts[2], plen[2]);
	v = parse_verdict(parts[3], plen[3]);
	if (!rr->ns || !rr->exporter || !rr->symbol || v < 0)
		return -EBADMSG;
	rr->verdict = (enum kmodns_verdict)v;
	rec->n_requires++;
	return 0;
}

/* "-" or a comma list of intree, signed; unknown traits (a newer depmod's) are skipped. */
static int parse_traits(struct kmodns_ns_record *rec, const char *s, size_t len)
{
	const char *end = s + len;

	rec->traits = 0;
	if (len == 1 && s[0] == '-')
		return 0;
	while (s < end) {
		const char *comma = memchr(s, ',', (size_t)(end - s)), *stop = comma ? comma : end;
		size_t n = (size_t)(stop - s);

		if (n == 0)
			return -EBADMSG;
		if (n == strlen("intree") && memcmp(s, "intree", n) == 0)
			rec->traits |= KMODNS_TRAIT_INTREE;
		else if (n == strlen("signed") && memcmp(s, "signed", n) == 0)
			rec->traits |= KMODNS_TRAIT_SIGNED;
		s = stop + (comma != NULL);
		if (comma != NULL && s == end)
			return -EBADMSG;
	}
	return 0;
}

static int record_parse(struct kmodns_ns_record *rec, const char *text)
{
	const char *p = text;
	int r = 0;

	rec->traits = -1;
	if (!startswith(text, RECORD_MAGIC " "))
		return -EBADMSG;
	p += strlen(RECORD_MAGIC);
	while (*p == ' ' && r >= 0) {
		const char *field = ++p, *eq, *end = strchrnul(field, ' ');
		size_t vlen;
		p = end;
		eq = memchr(field, '=', (size_t)(end - field));
		if (eq == NULL)
			return -EBADMSG;
		vlen = (size_t)(end - eq - 1);
#define FIELD_IS(k) ((size_t)(eq - field) == strlen(k) && memcmp(field, k, strlen(k)) == 0)
		if (FIELD_IS("vmlinux"))
			rec->vmlinux_known = vlen == 5 && memcmp(eq + 1, "known", 5) == 0;
		else if (FIELD_IS("unresolved"))
			r = parse_count(eq + 1, vlen, &rec->unresolved);
		else if (FIELD_IS("import"))
			r = parse_import(rec, eq + 1, vlen);
		else if (FIELD_IS("export"))
			r = push_name(rec, &rec->exports, &rec->n_exports, &rec->cap_exports, eq + 1, vlen);
		else if (FIELD_IS("unused"))
			r = push_name(rec, &rec->unused, &rec->n_unused, &rec->cap_unused, eq + 1, vlen);
		else if (FIELD_IS("require"))
			r = parse_require(rec, eq + 1, vlen);
		else if (FIELD_IS("traits"))
			r = parse_traits(rec, eq + 1, vlen);
		/* unknown fields: a newer depmod's; skipped */
#undef FIELD_IS
	}
	return r < 0 ? r : *p == '\0' ? 0 : -EBADMSG;
}

KMODNS_EXPORT int kmodns_ns_record_new_from_text(const char *text, struct kmodns_ns_record **out)
{
	struct kmodns_ns_record *rec = calloc(1, sizeof(*rec));
	int r;

	*out = NULL;
	if (rec == NULL)
		return -ENOMEM;
	r = record_parse(rec, text);
	if (r < 0) {
		kmodns_ns_record_unref(rec);
		return r;
	}
	*out = rec;
	return 0;
}

struct lookup_state {
	const char *record;
	unsigned count;
};

static int take_record(void *data, const char *value, unsigned priority)
{
	struct lookup_state *st = data;

	if (st->count++ > 0 && startswith(value, RECORD_MAGIC " "))
		st->record = value;
	return 0;
}

int kmodns_ns_record_lookup_in(struct kmodns_ctx *ctx, struct kmodns_index *idx, const char *label,
			       const char *modname, struct kmodns_ns_record **out)
{
	_cleanup_free_ char *key = strdup(modname);
	struct lookup_state st = { 0 };
	char *p;
	int r;

	*out = NULL;
	if (key == NULL)
		return -ENOMEM;
	for (p = key; *p; p++)
		if (*p == '-')
			*p = '_';
	r = kmodns_index_lookup(idx, key, take_record, &st);
	if (r >= 0 && st.record == NULL)
		r = -ENOENT; /* an index by a depmod that writes no records */
	if (r >= 0)
		r = kmodns_ns_record_new_from_text(st.record, out);
	if (r == -EBADMSG)
		ERR(ctx, "%s/modules.dep.bin: corrupt namespace record of %s", label, modname);
	return r < 0 ? r : 0;
}

KMODNS_EXPORT int kmodns_ns_record_lookup(struct kmodns_ctx *ctx, const char *dirname,
					  const char *modname, struct kmodns_ns_record **out)
{
	_cleanup_free_ char *path = NULL;
	struct kmodns_index *idx;
	int r;

	*out = NULL;
	if (asprintf(&path, "%s/modules.dep.bin", dirname) < 0)
		return -ENOMEM;
	r = kmodns_index_open(path, &idx);
	if (r < 0) {
		if (r != -ENOENT)
			ERR(ctx, "%s: %s", path, r == -EBADMSG ? "not a kmod index" : strerror(-r));
		return r;
	}
	r = kmodns_ns_record_lookup_in(ctx, idx, dirname, modname, out);
	kmodns_index_close(idx);
	return r;
}

KMODNS_EXPORT struct kmodns_ns_record *kmodns_ns_record_unref(struct kmodns_ns_record *rec)
{
	if (rec == NULL)
		return NULL;
	free(rec->imports);
	free(rec->import_verdicts);
	free(rec->exports);
	free(rec->unused);
	free(rec->requires);
	arena_release(&rec->strings);
	free(rec);
	return NULL;
}

KMODNS_EXPORT bool kmodns_ns_record_vmlinux_known(const struct kmodns_ns_record *rec) { return rec->vmlinux_known; }
KMODNS_EXPORT size_t kmodns_ns_record_get_import_count(const struct kmodns_ns_record *rec) { return rec->n_imports; }
KMODNS_EXPORT size_t kmodns_ns_record_get_export_count(const struct kmodns_ns_record *rec) { return rec->n_exports; }
KMODNS_EXPORT size_t kmodns_ns_record_get_unused_count(const struct kmodns_ns_record *rec) { return rec->n_unused; }
KMODNS_EXPORT size_t kmodns_ns_record_get_require_count(const struct kmodns_ns_record *rec) { return rec->n_requires; }

KMODNS_EXPORT const char *kmodns_ns_record_get_import(const struct kmodns_ns_record *rec, size_t i)
{
	return i < rec->n_imports ? rec->imports[i] : NULL;
}

KMODNS_EXPORT enum kmodns_verdict kmodns_ns_record_get_import_verdict(const struct kmodns_ns_record *rec,
								      size_t i)
{
	return i < rec->n_imports ? rec->import_verdicts[i] : KMODNS_ALLOWED_IMPORTED;
}

KMODNS_EXPORT int kmodns_ns_record_get_traits(const struct kmodns_ns_record *rec)
{
	return rec->traits;
}

KMODNS_EXPORT size_t kmodns_ns_record_get_unresolved_count(const struct kmodns_ns_record *rec)
{
	return rec->unresolved;
}

KMODNS_EXPORT const char *kmodns_ns_record_get_export(const struct kmodns_ns_record *rec, size_t i)
{
	return i < rec->n_exports ? rec->exports[i] : NULL;
}

KMODNS_EXPORT const char *kmodns_ns_record_get_unused(const struct kmodns_ns_record *rec, size_t i)
{
	return i < rec->n_unused ? rec->unused[i] : NULL;
}

KMODNS_EXPORT const char *kmodns_ns_record_get_require_namespace(const struct kmodns_ns_record *rec, size_t i)
{
	return i < rec->n_requires ? rec->requires[i].ns : NULL;
}

KMODNS_EXPORT const char *kmodns_ns_record_get_require_exporter(const struct kmodns_ns_record *rec, size_t i)
{
	return i < rec->n_requires ? rec->requires[i].exporter : NULL;
}

KMODNS_EXPORT const char *kmodns_ns_record_get_require_symbol(const struct kmodns_ns_record *rec, size_t i)
{
	return i < rec->n_requires ? rec->requires[i].symbol : NULL;
}

KMODNS_EXPORT enum kmodns_verdict kmodns_ns_record_get_require_verdict(const struct kmodns_ns_record *rec,
								       size_t i)
{
	return i < rec->n_requires ? rec->requires[i].verdict : KMODNS_ALLOWED_NO_NAMESPACE;
}
