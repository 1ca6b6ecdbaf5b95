// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * index-from-text KIND TEXT OUT [MODULES.DEP]: rebuilds one modules.*.bin from depmod's text the
 * way Debian's kmod 30 depmod builds it, so t-index.sh can cmp the two byte for byte.
 *   dep            modules.dep            key module name, value the line, priority the line number
 *   alias          modules.alias          key alias normalised, value module, priority its dep line
 *   symbols        modules.symbols        key "symbol:<sym>", value module, priority its dep line
 *   builtin        modules.builtin        key module name, value "", priority 0
 *   builtin.alias  modules.builtin.modinfo  key alias normalised, value module, priority 0
 *   records        lines "key<TAB>priority<TAB>value", for synthetic cases
 * index-from-text lookup [-p] INDEX KEY...: prints every value of each key, one a line
 * ("priority value" with -p); exit 1 with the error when the index is bad.
 */
#include <errno.h>

#include "libkmodns-index.h"
#include "tool-util.h"

static const char *program = "index-from-text";

static int usage(void)
{
	fprintf(stderr, "usage: %s dep|alias|symbols|builtin|builtin.alias|records TEXT OUT [MODULES.DEP]\n"
			"       %s lookup [-p] INDEX KEY...\n", program, program);
	return 2;
}

/* kmod's module name of a path (modname_from_path). Stops at len, not at '\n': depmod keeps
 * the newline of a modules.builtin line with no dot. */
static char *modname_of(const char *path, size_t len)
{
	char *name = modname_from_path_dup(path, len);

	if (name == NULL)
		abort();
	return name;
}

static int add(struct kmodns_index_builder *b, const char *key, const char *value, unsigned prio)
{
	int r = kmodns_index_builder_add(b, key, value, prio);

	if (r < 0)
		fprintf(stderr, "%s: cannot index key '%s': %s\n", program, key, strerror(-r));
	return r;
}

/* Module name -> line of modules.dep. */
struct dep_lines {
	struct strset names;
	unsigned *line;
	size_t capacity;
};

static int dep_lines_load(struct dep_lines *d, const char *path)
{
	_cleanup_free_ char *text = NULL;
	size_t size;
	char *p, *nl;
	unsigned n = 0;
	int r = read_file(path, &text, &size);

	if (r < 0) {
		fprintf(stderr, "%s: %s: %s\n", program, path, strerror(-r));
		return r;
	}
	for (p = text; *p; p = nl + 1, n++) {
		char *colon, *name;
		nl = strchrnul(p, '\n');
		colon = memchr(p, ':', (size_t)(nl - p));
		if (colon == NULL) {
			fprintf(stderr, "%s: %s:%u: not a modules.dep line\n", program, path, n + 1);
			return -EINVAL;
		}
		name = modname_of(p, (size_t)(colon - p));
		r = strset_add(&d->names, name);
		if (r > 0) {
			if (array_reserve((void **)&d->line, &d->capacity, sizeof(*d->line), d->names.count) < 0)
				abort();
			d->line[d->names.count - 1] = n;
		}
		free(name);
		if (r < 0)
			return r;
		if (*nl == '\0')
			break;
	}
	return 0;
}

static int from_dep(struct kmodns_index_builder *b, char *text, const char *path)
{
	char *p, *nl;
	unsigned n = 0;

	for (p = text; *p; p = nl + 1, n++) {
		char *colon, *name;
		bool last;
		int r;
		nl = strchrnul(p, '\n');
		last = *nl == '\0';
		*nl = '\0';
		colon = strchr(p, ':');
		if (colon == NULL) {
			fprintf(stderr, "%s: %s:%u: not a modules.dep line\n", program, path, n + 1);
			return -EINVAL;
		}
		name = modname_of(p, (size_t)(colon - p));
		r = add(b, name, p, n);
		free(name);
		if (r < 0)
			return r;
		if (last)
			break;
	}
	return 0;
}

/* "alias KEY MODULE" lines (modules.alias, modules.symbols); KEY may hold spaces or be empty. */
static int from_alias_lines(struct kmodns_index_builder *b, char *text, const char *path,
			    const struct dep_lines *d, bool normalize)
{
	char *p, *nl;
	unsigned n = 0;

	for (p = text; *p; p = nl + 1) {
		char *sp, *module, *key;
		long i;
		int r;
		bool last;
		nl = strchrnul(p, '\n');
		last = *nl == '\0';
		*nl = '\0';
		n++;
		if (*p == '\0' || *p == '#')
			goto next;
		sp = strrchr(p, ' ');
		if (!startswith(p, "alias ") || sp < p + 6) {
			fprintf(stderr, "%s: %s:%u: not an alias line\n", program, path, n);
			return -EINVAL;
		}
		*sp = '\0';
		module = sp + 1;
		i = strset_find(&d->names, module);
		if (i < 0) {
			fprintf(stderr, "%s: %s:%u: module %s is not in modules.dep\n", program, path, n, module);
			return -EINVAL;
		}
		key = normalize ? alias_normalize(p + 6) : strdup(p + 6);
		if (key == NULL) {
			/* depmod warns "Unmatched bracket in <alias>" and leaves it out */
			fprintf(stderr, "%s: unmatched bracket in %s, skipped like depmod\n", program, p + 6);
			goto next;
		}
		r = add(b, key, module, d->line[i]);
		free(key);
		if (r < 0)
			return r;
next:
		if (last)
			break;
	}
	return 0;
}

/* modules.builtin: depmod skips a line not starting with a letter ("Invalid modules.builtin
 * line") and names the module from the line as read, newline included. */
static int from_builtin(struct kmodns_index_builder *b, const char *text, size_t size)
{
	const char *p = text, *end = text + size;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *next = nl ? nl + 1 : end;
		char *name;
		int r;
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z'))) {
			fprintf(stderr, "%s: invalid modules.builtin line: %.*s", program, (int)(next - p), p);
			p = next;
			continue;
		}
		name = modname_of(p, (size_t)(next - p));
		r = add(b, name, "", 0);
		free(name);
		if (r < 0)
			return r;
		p = next;
	}
	return 0;
}

/* modules.builtin.modinfo: NUL-terminated "module.key=value" records (an unterminated tail is
 * ignored, as depmod does); only non-empty "alias" values count, valued by the raw module name. */
static int from_builtin_modinfo(struct kmodns_index_builder *b, const char *text, size_t size)
{
	const char *p = text, *end = text + size;
	bool swallow = false;

	while (p < end) {
		const char *nul = memchr(p, '\0', (size_t)(end - p));
		const char *dot, *eq;
		char *module, *key;
		int r;
		if (nul == NULL)
			break;
		if (swallow) {
			swallow = false;
			p = nul + 1;
			continue;
		}
		dot = strchr(p, '.');
		eq = dot ? strchr(dot, '=') : NULL;
		if (dot == NULL || dot == p) {
			p = nul + 1;
			continue;
		}
		if (eq == NULL) {
			/* depmod loses the record after a "module.key" without '=' */
			swallow = true;
			p = nul + 1;
			continue;
		}
		if ((size_t)(eq - dot - 1) != strlen("alias") || memcmp(dot + 1, "alias", 5) != 0 ||
		    eq[1] == '\0') {
			p = nul + 1;
			continue;
		}
		key = alias_normalize(eq + 1);
		if (key == NULL) {
			fprintf(stderr, "%s: unmatched bracket in %s, skipped like depmod\n", program, eq + 1);
			p = nul + 1;
			continue;
		}
		module = strndup(p, (size_t)(dot - p));
		if (module == NULL)
			abort();
		r = add(b, key, module, 0);
		free(module);
		free(key);
		if (r < 0)
			return r;
		p = nul + 1;
	}
	return 0;
}

static int from_records(struct kmodns_index_builder *b, char *text, const char *path)
{
	char *p, *nl;
	unsigned n = 0;

	for (p = text; *p; p = nl + 1) {
		char *t1, *t2, *end;
		unsigned long prio;
		bool last;
		int r;
		nl = strchrnul(p, '\n');
		last = *nl == '\0';
		*nl = '\0';
		n++;
		t1 = strchr(p, '\t');
		t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
		if (t2 == NULL) {
			fprintf(stderr, "%s: %s:%u: want key<TAB>priority<TAB>value\n", program, path, n);
			return -EINVAL;
		}
		*t1 = *t2 = '\0';
		errno = 0;
		prio = strtoul(t1 + 1, &end, 10);
		if (errno != 0 || *end != '\0' || end == t1 + 1 || prio > UINT32_MAX) {
			fprintf(stderr, "%s: %s:%u: bad priority\n", program, path, n);
			return -EINVAL;
		}
		r = add(b, p, t2 + 1, (unsigned)prio);
		if (r < 0)
			return r;
		if (last)
			break;
	}
	return 0;
}

static int print_value(void *data, const char *value, unsigned priority)
{
	if (*(bool *)data)
		printf("%u %s\n", priority, value);
	else
		printf("%s\n", value);
	return 0;
}

static int lookup(int argc, char *argv[])
{
	struct kmodns_index *idx;
	bool with_prio = false;
	int i = 0, r, failed = 0;

	if (argc > 0 && streq(argv[0], "-p")) {
		with_prio = true;
		i++;
	}
	if (i >= argc)
		return usage();
	r = kmodns_index_open(argv[i], &idx);
	if (r < 0) {
		fprintf(stderr, "%s: %s: %s\n", program, argv[i], strerror(-r));
		return 1;
	}
	for (i++; i < argc; i++) {
		r = kmodns_index_lookup(idx, argv[i], print_value, &with_prio);
		if (r < 0) {
			fprintf(stderr, "%s: lookup %s: %s\n", program, argv[i], strerror(-r));
			failed = 1;
		}
	}
	kmodns_index_close(idx);
	return failed;
}

int main(int argc, char *argv[])
{
	struct kmodns_index_builder *b;
	struct dep_lines deps = { 0 };
	_cleanup_free_ char *text = NULL;
	const char *kind, *in, *out;
	FILE *f;
	size_t size;
	int r;

	if (argc >= 2 && streq(argv[1], "lookup"))
		return lookup(argc - 2, argv + 2);
	if (argc < 4)
		return usage();
	kind = argv[1], in = argv[2], out = argv[3];
	if (streq(kind, "alias") || streq(kind, "symbols")) {
		if (argc != 5)
			return usage();
		if (dep_lines_load(&deps, argv[4]) < 0) {
			strset_release(&deps.names);
			free(deps.line);
			return 1;
		}
	} else if (argc != 4 || !(streq(kind, "dep") || streq(kind, "builtin") ||
				  streq(kind, "builtin.alias") || streq(kind, "records"))) {
		return usage();
	}
	r = read_file(in, &text, &size);
	if (r < 0) {
		fprintf(stderr, "%s: %s: %s\n", program, in, strerror(-r));
		return 1;
	}
	b = kmodns_index_builder_new();
	if (b == NULL)
		abort();
	if (streq(kind, "dep"))
		r = from_dep(b, text, in);
	else if (streq(kind, "alias"))
		r = from_alias_lines(b, text, in, &deps, true);
	else if (streq(kind, "symbols"))
		r = from_alias_lines(b, text, in, &deps, false);
	else if (streq(kind, "builtin"))
		r = from_builtin(b, text, size);
	else if (streq(kind, "builtin.alias"))
		r = from_builtin_modinfo(b, text, size);
	else
		r = from_records(b, text, in);
	if (r >= 0) {
		f = fopen(out, "we");
		if (f == NULL) {
			r = -errno;
			fprintf(stderr, "%s: %s: %s\n", program, out, strerror(errno));
		} else {
			r = kmodns_index_builder_write(b, f);
			if (fclose(f) != 0 && r >= 0)
				r = -errno;
			if (r < 0)
				fprintf(stderr, "%s: writing %s: %s\n", program, out, strerror(-r));
		}
	}
	kmodns_index_builder_free(b);
	strset_release(&deps.names);
	free(deps.line);
	return r < 0 ? 1 : 0;
}
