// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The admin's namespace policy: *.conf files of /etc/kmodns.d, /run/kmodns.d and
 * /usr/lib/kmodns.d (a name in an earlier directory hides it in a later one; all
 * are read in name order), or files named by the caller. See kmodns.d(5).
 *
 *   missing-import refuse|warn|allow|kernel
 *   allow|warn|refuse NAMESPACE-GLOB [module=GLOBS] [module!=GLOBS] [in-tree|out-of-tree]
 *                                    [signed|unsigned] [dir=DIRS]
 *
 * For each namespace a module uses, the first rule whose namespace and conditions
 * match decides; a malformed line is reported and skipped, the rest still applies.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "libkmodns-private.h"

static const char *const installed_dirs[] = { "/etc/kmodns.d", "/run/kmodns.d", "/usr/lib/kmodns.d" };

/* A list of globs or directories: the items one after another, each NUL-terminated. */
struct name_list {
	const char *items;
	size_t count;
};

struct policy_rule {
	enum kmodns_policy_action action;
	const char *ns; /* glob */
	struct name_list modules, not_modules, dirs;
	int intree, signed_; /* -1: either; else what the module must be for the rule to match */
	const char *file, *text;
	unsigned line;
};

struct kmodns_policy {
	int refcount;
	struct kmodns_ctx *ctx;
	struct arena strings;
	struct policy_rule *rules;
	size_t n_rules, rules_capacity;
	struct policy_rule missing_import; /* action KMODNS_POLICY_KERNEL until a line says */
	struct strset files;               /* read, in order */
	size_t n_errors;
};

static const char *const action_names[] = {
	[KMODNS_POLICY_ALLOW] = "allow",
	[KMODNS_POLICY_WARN] = "warn",
	[KMODNS_POLICY_REFUSE] = "refuse",
	[KMODNS_POLICY_KERNEL] = "kernel",
};

static int parse_action(const char *word, bool kernel_too)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(action_names); i++)
		if (streq(word, action_names[i]) && (kernel_too || i != KMODNS_POLICY_KERNEL))
			return (int)i;
	return -1;
}

_printf_(4, 5) static void policy_error(struct kmodns_policy *p, const char *file, unsigned line,
					const char *fmt, ...)
{
	_cleanup_free_ char *msg = NULL;
	va_list ap;
	int r;

	p->n_errors++;
	va_start(ap, fmt);
	r = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (r < 0)
		return;
	if (line > 0)
		ERR(p->ctx, "%s:%u: %s", file, line, msg);
	else
		ERR(p->ctx, "%s: %s", file, msg);
}

/* "a,b-c" into a list; module names with '-' read as '_', as the kernel spells them. */
static const char *parse_list(struct kmodns_policy *p, const char *value, bool module_names,
			      struct name_list *list)
{
	size_t len = strlen(value), i;
	char *items;

	if (list->items != NULL)
		return "given twice";
	if (len == 0 || value[0] == ',' || value[len - 1] == ',' || strstr(value, ",,"))
		return "has an empty item";
	items = arena_strndup(&p->strings, value, len);
	if (items == NULL)
		return "out of memory";
	list->count = 1;
	for (i = 0; i < len; i++) {
		if (items[i] == ',') {
			items[i] = '\0';
			list->count++;
		} else if (module_names && items[i] == '-') {
			items[i] = '_';
		}
	}
	list->items = items;
	return NULL;
}

/* A trailing '/' of a directory item ("updates/") is dropped; ".." is no directory of a tree. */
static const char *check_dirs(struct name_list *dirs)
{
	const char *d = dirs->items;
	size_t i;

	for (i = 0; i < dirs->count; i++, d += strlen(d) + 1) {
		char *end = (char *)d + strlen(d);

		while (end > d + 1 && end[-1] == '/')
			*--end = '\0';
		if (strstr(d, "..") != NULL)
			return "must not contain \"..\"";
	}
	return NULL;
}

static const char *set_flag(int *flag, int value)
{
	if (*flag != -1)
		return *flag == value ? "given twice" : "contradicts another condition";
	*flag = value;
	return NULL;
}

/* One condition word of a rule; NULL when it is good, else what is wrong with it. */
static const char *parse_condition(struct kmodns_policy *p, struct policy_rule *rule, const char *word)
{
	const char *why;

	if (startswith(word, "module!="))
		return parse_list(p, word + strlen("module!="), true, &rule->not_modules);
	if (startswith(word, "module="))
		return parse_list(p, word + strlen("module="), true, &rule->modules);
	if (startswith(word, "dir=")) {
		why = parse_list(p, word + strlen("dir="), false, &rule->dirs);
		return why ? why : check_dirs(&rule->dirs);
	}
	if (streq(word, "in-tree") || streq(word, "out-of-tree"))
		return set_flag(&rule->intree, streq(word, "in-tree"));
	if (streq(word, "signed") || streq(word, "unsigned"))
		return set_flag(&rule->signed_, streq(word, "signed"));
	return "is not a condition (module=, module!=, in-tree, out-of-tree, signed, unsigned, dir=)";
}

#define MAX_WORDS 64

/* Splits line in place at blanks; the number of words, or MAX_WORDS + 1 for too many. */
static size_t split_words(char *line, char **words)
{
	size_t n = 0;
	char *save = NULL, *w;

	for (w = strtok_r(line, " \t\n\r\v\f", &save); w; w = strtok_r(NULL, " \t\n\r\v\f", &save)) {
		if (n == MAX_WORDS)
			return MAX_WORDS + 1;
		words[n++] = w;
	}
	return n;
}

/* The words joined by one space: the rule as messages quote it. Built without printf: every
 * modprobe call reads every rule, and few ever quote one. */
static const char *join_words(struct kmodns_policy *p, char **words, size_t n)
{
	size_t len = 0, i;
	char *text, *q;

	for (i = 0; i < n; i++)
		len += strlen(words[i]) + 1;
	/* the words lie in order in one line, at least one blank apart: len - 1 bytes are there */
	text = arena_strndup(&p->strings, words[0], len - 1);
	if (text == NULL)
		return NULL;
	for (i = 0, q = text; i < n; i++) {
		size_t w = strlen(words[i]);
		if (i > 0)
			*q++ = ' ';
		memcpy(q, words[i], w);
		q += w;
	}
	return text;
}

static int parse_line(struct kmodns_policy *p, const char *file, unsigned lineno, char *line)
{
	char *words[MAX_WORDS];
	size_t n = split_words(line, words), i;
	struct policy_rule rule = { .intree = -1, .signed_ = -1, .file = file, .line = lineno };
	int action;

	if (n == 0 || words[0][0] == '#')
		return 0;
	if (n > MAX_WORDS) {
		policy_error(p, file, lineno, "more than %d words", MAX_WORDS);
		return 0;
	}
	if (streq(words[0], "missing-import")) {
		action = n == 2 ? parse_action(words[1], true) : -1;
		if (action < 0) {
			policy_error(p, file, lineno, "expected \"missing-import refuse|warn|allow|kernel\"");
			return 0;
		}
		/* the first line read decides, as for rules */
		if (p->missing_import.file != NULL)
			return 0;
		rule.action = (enum kmodns_policy_action)action;
		rule.text = join_words(p, words, n);
		if (rule.text == NULL)
			return -ENOMEM;
		p->missing_import = rule;
		return 0;
	}
	action = parse_action(words[0], false);
	if (action < 0) {
		policy_error(p, file, lineno, "unknown directive '%s' (missing-import, allow, warn, refuse)",
			     words[0]);
		return 0;
	}
	if (n < 2) {
		policy_error(p, file, lineno, "'%s' needs a namespace (a glob: * for all)", words[0]);
		return 0;
	}
	rule.action = (enum kmodns_policy_action)action;
	for (i = 2; i < n; i++) {
		const char *why = parse_condition(p, &rule, words[i]);

		if (why != NULL) {
			policy_error(p, file, lineno, "'%s' %s", words[i], why);
			return 0;
		}
	}
	rule.ns = arena_strdup(&p->strings, words[1]);
	rule.text = join_words(p, words, n);
	if (rule.ns == NULL || rule.text == NULL ||
	    array_reserve((void **)&p->rules, &p->rules_capacity, sizeof(rule), p->n_rules + 1) < 0)
		return -ENOMEM;
	p->rules[p->n_rules++] = rule;
	return 0;
}

/* Why an installed policy file may not be trusted, or NULL: as sudoers, root's and only root's. */
static const char *untrusted_because(const struct stat *st)
{
	if (st->st_uid != 0)
		return "not owned by root";
	if (st->st_mode & (S_IWGRP | S_IWOTH))
		return "writable by group or others";
	return NULL;
}

static int read_policy_file(struct kmodns_policy *p, const char *path, bool installed)
{
	_cleanup_free_ char *line = NULL;
	_cleanup_fclose_ FILE *f = NULL;
	const char *file, *why;
	unsigned lineno = 0;
	size_t cap = 0;
	ssize_t len;
	struct stat st;
	int fd, r = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		policy_error(p, path, 0, "%s", strerror(errno));
		return 0;
	}
	if (fstat(fd, &st) < 0) {
		policy_error(p, path, 0, "%s", strerror(errno));
		close(fd);
		return 0;
	}
	/* a link to /dev/null masks a file of the same name further down, as in systemd */
	if (S_ISCHR(st.st_mode) && major(st.st_rdev) == 1 && minor(st.st_rdev) == 3) {
		close(fd);
		return 0;
	}
	why = !S_ISREG(st.st_mode) ? "not a regular file" : installed ? untrusted_because(&st) : NULL;
	if (why != NULL) {
		policy_error(p, path, 0, "ignored: %s", why);
		close(fd);
		return 0;
	}
	f = fdopen(fd, "re");
	if (f == NULL) {
		close(fd);
		return -ENOMEM;
	}
	if (strset_add(&p->files, path) < 0)
		return -ENOMEM;
	file = p->files.items[strset_find(&p->files, path)];
	errno = 0;
	while (r >= 0 && (len = getline(&line, &cap, f)) >= 0) {
		lineno++;
		if (strlen(line) != (size_t)len) {
			policy_error(p, file, lineno, "contains a NUL byte");
			continue;
		}
		r = parse_line(p, file, lineno, line);
	}
	if (r >= 0 && ferror(f))
		policy_error(p, file, 0, "%s", strerror(errno ? errno : EIO));
	return r;
}

static struct kmodns_policy *policy_alloc(struct kmodns_ctx *ctx)
{
	struct kmodns_policy *p = calloc(1, sizeof(*p));

	if (p == NULL)
		return NULL;
	p->refcount = 1;
	p->ctx = kmodns_ref(ctx);
	p->missing_import.action = KMODNS_POLICY_KERNEL;
	return p;
}

KMODNS_EXPORT int kmodns_policy_new_from_files(struct kmodns_ctx *ctx, const char *const *paths,
					       size_t n_paths, struct kmodns_policy **out)
{
	struct kmodns_policy *p = policy_alloc(ctx);
	size_t i;
	int r = 0;

	*out = NULL;
	if (p == NULL)
		return -ENOMEM;
	for (i = 0; i < n_paths && r >= 0; i++)
		r = read_policy_file(p, paths[i], false);
	if (r < 0) {
		kmodns_policy_unref(p);
		return r;
	}
	*out = p;
	return 0;
}

static int compare_base_names(const void *a, const void *b)
{
	const char *x = *(const char *const *)a, *y = *(const char *const *)b;

	return strcmp(strrchr(x, '/') + 1, strrchr(y, '/') + 1);
}

/* The *.conf files of the installed directories: one per name, the first directory's. */
static int list_installed(struct kmodns_policy *p, const char *root, struct strset *names,
			  struct strset *paths)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(installed_dirs); i++) {
		_cleanup_free_ char *dir = NULL;
		struct dirent *de;
		DIR *d;

		if (asprintf(&dir, "%s%s", root, installed_dirs[i]) < 0)
			return -ENOMEM;
		d = opendir(dir);
		if (d == NULL) {
			if (errno != ENOENT && errno != ENOTDIR)
				policy_error(p, dir, 0, "%s", strerror(errno));
			continue;
		}
		while ((de = readdir(d)) != NULL) {
			_cleanup_free_ char *path = NULL;
			size_t len = strlen(de->d_name);
			int r;

			if (de->d_name[0] == '.' || len <= 5 || !streq(de->d_name + len - 5, ".conf"))
				continue;
			r = strset_add(names, de->d_name);
			if (r > 0 && (asprintf(&path, "%s/%s", dir, de->d_name) < 0 ||
				      strset_add(paths, path) < 0))
				r = -ENOMEM;
			if (r < 0) {
				closedir(d);
				return r;
			}
		}
		closedir(d);
	}
	return 0;
}

KMODNS_EXPORT int kmodns_policy_new_installed(struct kmodns_ctx *ctx, const char *root,
					      struct kmodns_policy **out)
{
	struct strset names = { 0 }, paths = { 0 };
	struct kmodns_policy *p = policy_alloc(ctx);
	size_t i;
	int r;

	*out = NULL;
	if (p == NULL)
		return -ENOMEM;
	r = list_installed(p, root ? root : "", &names, &paths);
	if (r >= 0) {
		if (paths.count > 1)
			qsort(paths.items, paths.count, sizeof(char *), compare_base_names);
		for (i = 0; i < paths.count && r >= 0; i++)
			r = read_policy_file(p, paths.items[i], true);
	}
	strset_release(&names);
	/* sorted in place: the set's hash slots are stale, only its strings are freed */
	strset_release(&paths);
	if (r < 0) {
		kmodns_policy_unref(p);
		return r;
	}
	*out = p;
	return 0;
}

KMODNS_EXPORT struct kmodns_policy *kmodns_policy_ref(struct kmodns_policy *p)
{
	if (p)
		p->refcount++;
	return p;
}

KMODNS_EXPORT struct kmodns_policy *kmodns_policy_unref(struct kmodns_policy *p)
{
	if (p == NULL || --p->refcount > 0)
		return NULL;
	free(p->rules);
	strset_release(&p->files);
	arena_release(&p->strings);
	kmodns_unref(p->ctx);
	free(p);
	return NULL;
}

KMODNS_EXPORT size_t kmodns_policy_get_error_count(const struct kmodns_policy *p) { return p->n_errors; }
KMODNS_EXPORT size_t kmodns_policy_get_file_count(const struct kmodns_policy *p) { return p->files.count; }
KMODNS_EXPORT size_t kmodns_policy_get_rule_count(const struct kmodns_policy *p) { return p->n_rules; }

KMODNS_EXPORT const char *kmodns_policy_get_file(const struct kmodns_policy *p, size_t i)
{
	return i < p->files.count ? p->files.items[i] : NULL;
}

KMODNS_EXPORT enum kmodns_policy_action kmodns_policy_get_missing_import(const struct kmodns_policy *p)
{
	return p->missing_import.action;
}

static const struct policy_rule *rule_at(const struct kmodns_policy *p, size_t i)
{
	return i < p->n_rules ? &p->rules[i] : NULL;
}

KMODNS_EXPORT const char *kmodns_policy_rule_get_namespace(const struct kmodns_policy *p, size_t i)
{
	return rule_at(p, i) ? rule_at(p, i)->ns : NULL;
}

KMODNS_EXPORT const char *kmodns_policy_rule_get_text(const struct kmodns_policy *p, size_t i)
{
	return rule_at(p, i) ? rule_at(p, i)->text : NULL;
}

KMODNS_EXPORT const char *kmodns_policy_rule_get_file(const struct kmodns_policy *p, size_t i)
{
	return rule_at(p, i) ? rule_at(p, i)->file : NULL;
}

KMODNS_EXPORT unsigned kmodns_policy_rule_get_line(const struct kmodns_policy *p, size_t i)
{
	return rule_at(p, i) ? rule_at(p, i)->line : 0;
}

/* The module globs of module= then module!=, flattened: what a lint checks against a tree. */
KMODNS_EXPORT size_t kmodns_policy_rule_get_module_count(const struct kmodns_policy *p, size_t i)
{
	return rule_at(p, i) ? p->rules[i].modules.count + p->rules[i].not_modules.count : 0;
}

static const char *list_item(const struct name_list *list, size_t j)
{
	const char *s = list->items;

	while (j-- > 0)
		s += strlen(s) + 1;
	return s;
}

KMODNS_EXPORT const char *kmodns_policy_rule_get_module(const struct kmodns_policy *p, size_t i, size_t j)
{
	const struct policy_rule *r = rule_at(p, i);

	if (r == NULL || j >= r->modules.count + r->not_modules.count)
		return NULL;
	return j < r->modules.count ? list_item(&r->modules, j) :
				      list_item(&r->not_modules, j - r->modules.count);
}

KMODNS_EXPORT const char *kmodns_policy_action_to_string(enum kmodns_policy_action action)
{
	return (size_t)action < ARRAY_SIZE(action_names) ? action_names[action] : NULL;
}

/* ---- matching ------------------------------------------------------------------------ */

/* fnmatch(), with the literal head of the glob compared first: modprobe asks every rule about
 * every namespace of every module it loads, and most rules differ from the start. */
static bool glob_matches(const char *glob, const char *s)
{
	size_t head = strcspn(glob, "*?[\\");

	if (strncmp(glob, s, head) != 0)
		return false;
	if (glob[head] == '\0')
		return s[head] == '\0';
	return fnmatch(glob + head, s + head, 0) == 0;
}

static bool list_matches(const struct name_list *list, const char *name)
{
	const char *s = list->items;
	size_t i;

	for (i = 0; i < list->count; i++, s += strlen(s) + 1)
		if (glob_matches(s, name))
			return true;
	return false;
}

/* Is path under one of dirs, given relative to the module directory or absolute? */
static bool dir_matches(const struct name_list *dirs, const char *moddir, const char *path)
{
	size_t len = strlen(moddir);
	const char *rel = path, *d = dirs->items;
	size_t i;

	if (strncmp(path, moddir, len) == 0 && path[len] == '/')
		rel = path + len + 1;
	for (i = 0; i < dirs->count; i++, d += strlen(d) + 1) {
		const char *in = d[0] == '/' ? path : rel;
		size_t dlen = strlen(d);

		if (strncmp(in, d, dlen) == 0 && in[dlen] == '/')
			return true;
	}
	return false;
}

static int subject_traits(struct policy_subject *s)
{
	if (s->traits < 0 && s->get_traits != NULL)
		s->traits = s->get_traits(s->data);
	return s->traits;
}

/* 1: the rule's conditions hold for s; 0: not; a negative errno when a trait cannot be read. */
static int conditions_hold(const struct policy_rule *r, struct policy_subject *s)
{
	int traits;

	if (r->modules.items && !list_matches(&r->modules, s->name))
		return 0;
	if (r->not_modules.items && list_matches(&r->not_modules, s->name))
		return 0;
	if (r->dirs.items && (s->path == NULL || !dir_matches(&r->dirs, s->moddir, s->path)))
		return 0;
	if (r->intree < 0 && r->signed_ < 0)
		return 1;
	traits = subject_traits(s);
	if (traits < 0)
		return traits;
	if (r->intree >= 0 && r->intree != !!(traits & KMODNS_TRAIT_INTREE))
		return 0;
	if (r->signed_ >= 0 && r->signed_ != !!(traits & KMODNS_TRAIT_SIGNED))
		return 0;
	return 1;
}

int kmodns_policy_match(const struct kmodns_policy *p, struct policy_subject *s, const char *ns,
			struct policy_match *m)
{
	size_t i;

	for (i = 0; i < p->n_rules; i++) {
		const struct policy_rule *r = &p->rules[i];
		int hold;

		if (!glob_matches(r->ns, ns))
			continue;
		hold = conditions_hold(r, s);
		if (hold < 0)
			return hold;
		if (hold == 0)
			continue;
		*m = (struct policy_match){ r->action, ns, r->file, r->line, r->text, false };
		return 1;
	}
	return 0;
}

bool kmodns_policy_missing_import(const struct kmodns_policy *p, const char *ns, struct policy_match *m)
{
	const struct policy_rule *r = &p->missing_import;

	if (r->action == KMODNS_POLICY_KERNEL)
		return false;
	*m = (struct policy_match){ r->action, ns, r->file, r->line, r->text, true };
	return true;
}
