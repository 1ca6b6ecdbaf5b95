// SPDX-License-Identifier: GPL-2.0-or-later
/* depmod's configuration (depmod.d), read as kmod 30 reads it. */
#include <dirent.h>
#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "depmod-config.h"
#include "tool-util.h"

void cfg_release(struct cfg *cfg)
{
	size_t i;

	for (i = 0; i < cfg->n_searches; i++)
		free(cfg->searches[i].path);
	for (i = 0; i < cfg->n_overrides; i++) {
		free(cfg->overrides[i].modname);
		free(cfg->overrides[i].subdir);
	}
	for (i = 0; i < cfg->n_externals; i++)
		free(cfg->externals[i]);
	free(cfg->searches);
	free(cfg->overrides);
	free(cfg->externals);
	strset_release(&cfg->excludes);
	strset_release(&cfg->config_files);
}

/* glibc's regcomp copies a repeated piece once per repetition ("x+" is "xx*", "x{2,4}" four
 * x's), and works out the empty paths through repetitions of repetitions in a time that grows
 * far faster than the tree: "a+++...", "((a+)+)+...", "C???+++++++" (0.8 s) in one short line
 * took all memory or time (fuzz findings). A pattern with repetitions nested more than
 * REGEX_MAX_NESTING deep ("(\.[0-9]+)+" is 2), or a tree past REGEX_MAX_NODES nodes, is one
 * regcomp would take too long over: it never matches. Within both, the worst we found,
 * "(a?|b?){1,200}", compiles in about 16 ms. */
#define REGEX_MAX_NODES 512u
#define REGEX_MAX_NESTING 2u
#define REGEX_MAX_DEPTH 32

static size_t regex_nodes_cap(size_t n)
{
	return n > REGEX_MAX_NODES ? REGEX_MAX_NODES + 1 : n;
}

static unsigned long regex_count(const char *p, const char **after)
{
	unsigned long n = 0;

	for (*after = p; **after >= '0' && **after <= '9'; (*after)++)
		n = n > REGEX_MAX_NODES ? n : n * 10 + (unsigned long)(**after - '0');
	return n;
}

/* "{m}", "{m,}", "{m,n}" or glibc's "{,n}" at p: the most copies it asks for ({m,} is m and a
 * star); 0 when p is no interval (then '{' is a literal) */
static size_t regex_interval_copies(const char *p, const char **end)
{
	const char *after;
	unsigned long m, n;

	m = regex_count(p + 1, &after);
	if (after == p + 1 && *after != ',')
		return 0;
	n = m;
	if (*after == ',') {
		const char *upper = after + 1;
		n = regex_count(upper, &after);
		if (after == upper)
			n = m + 1;
	}
	if (*after != '}')
		return 0;
	*end = after;
	return regex_nodes_cap(n < m ? m : n < 1 ? 1 : n);
}

/* the ']' closing the bracket expression opened at p ("[]..." and "[^]..." take ']' as a
 * member; "[:alpha:]", "[.x.]" and "[=e=]" inside are one), NULL when it is not closed */
static const char *regex_bracket_end(const char *p)
{
	const char *close;

	p += 1 + (p[1] == '^');
	p += *p == ']';
	for (; *p != '\0' && *p != ']'; p++)
		if (p[0] == '[' && p[1] != '\0' && strchr(":.=", p[1]) &&
		    (close = strchr(p + 2, p[1])) != NULL && close[1] == ']')
			p = close + 1;
	return *p == ']' ? p : NULL;
}

static bool regex_is_small(const char *p)
{
	struct regex_level {
		size_t nodes; /* of this group so far */
		size_t last;  /* of its last piece, which a repetition copies */
		unsigned nesting, last_nesting; /* of repetitions: in it, in its last piece */
	} level[REGEX_MAX_DEPTH + 1] = { { 0, 0, 0, 0 } };
	size_t depth = 0, atom, copies;
	unsigned nesting;
	const char *end;

	for (; *p != '\0'; p++) {
		atom = 1;
		nesting = 0;
		switch (*p) {
		case '\\':
			p += p[1] != '\0';
			break;
		case '[':
			if ((end = regex_bracket_end(p)) == NULL)
				return true; /* regcomp refuses it, quickly */
			p = end;
			break;
		case '(':
			if (depth == REGEX_MAX_DEPTH)
				return false;
			level[++depth] = (struct regex_level){ 0, 0, 0, 0 };
			continue;
		case ')':
			if (depth > 0) {
				atom = level[depth].nodes + 1;
				nesting = level[depth--].nesting;
			}
			break;
		case '|':
			level[depth].nodes = regex_nodes_cap(level[depth].nodes + 1);
			level[depth].last = 0;
			level[depth].last_nesting = 0;
			continue;
		case '*':
		case '?':
		case '+':
		case '{':
			copies = *p == '+' ? 2 : 1;
			if (*p == '{') {
				copies = regex_interval_copies(p, &end);
				if (copies == 0)
					break; /* a literal '{' */
				p = end;
			}
			/* the piece before, copied, and one node that repeats or chooses */
			atom = regex_nodes_cap(level[depth].last * copies + 1);
			nesting = level[depth].last_nesting + 1;
			level[depth].nodes -= level[depth].last;
			break;
		}
		level[depth].nodes = regex_nodes_cap(level[depth].nodes + atom);
		level[depth].last = atom;
		level[depth].last_nesting = nesting;
		if (nesting > level[depth].nesting)
			level[depth].nesting = nesting;
		if (level[depth].nodes > REGEX_MAX_NODES || nesting > REGEX_MAX_NESTING)
			return false;
	}
	return true;
}

/* The version field of override and external lines: "*", or an extended regular expression
 * found anywhere in the version (kmod's rule: "6\.1" matches 6.1.0-9-amd64); a bad one never. */
static bool kversion_matches(const struct cfg *cfg, const char *pattern)
{
	regex_t re;
	bool match;

	if (streq(pattern, "*"))
		return true;
	if (!regex_is_small(pattern))
		return false;
	if (regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB) != 0)
		return false;
	match = regexec(&re, cfg->kversion, 0, NULL, 0) == 0;
	regfree(&re);
	return match;
}

static int cfg_add_search(struct cfg *cfg, const char *word)
{
	struct search *se;
	size_t cap = cfg->n_searches;

	if (array_reserve((void **)&cfg->searches, &cap, sizeof(*se), cfg->n_searches + 1) < 0)
		return -ENOMEM;
	se = &cfg->searches[cfg->n_searches];
	se->external = streq(word, "external");
	se->path = NULL;
	if (!se->external && !streq(word, "built-in") && (se->path = strdup(word)) == NULL)
		return -ENOMEM;
	cfg->n_searches++;
	return 0;
}

static int cfg_add_override(struct cfg *cfg, const char *modname, const char *subdir)
{
	size_t cap = cfg->n_overrides;
	struct override ov = { strdup(modname), strdup(subdir) };

	if (ov.modname == NULL || ov.subdir == NULL ||
	    array_reserve((void **)&cfg->overrides, &cap, sizeof(ov), cfg->n_overrides + 1) < 0) {
		free(ov.modname);
		free(ov.subdir);
		return -ENOMEM;
	}
	cfg->overrides[cfg->n_overrides++] = ov;
	return 0;
}

static int cfg_add_external(struct cfg *cfg, const char *dir)
{
	size_t cap = cfg->n_externals;
	char *copy = strdup(dir);

	if (copy == NULL ||
	    array_reserve((void **)&cfg->externals, &cap, sizeof(char *), cfg->n_externals + 1) < 0) {
		free(copy);
		return -ENOMEM;
	}
	cfg->externals[cfg->n_externals++] = copy;
	return 0;
}

/* One logical line as kmod reads it: "\<newline>" joins the next line, '\' before any other
 * character keeps just that character. *lineno counts physical lines (it ends on the last
 * one). -1 at the end of the file, else 0. */
static int cfg_read_line(FILE *f, char **line, size_t *cap, unsigned *lineno)
{
	size_t len = 0;
	int c;

	c = getc(f);
	if (c == EOF)
		return -1;
	for (;;) {
		if (c == EOF || c == '\n') {
			(*lineno)++;
			break;
		}
		if (c == '\\') {
			c = getc(f);
			if (c == EOF) {
				(*lineno)++;
				break;
			}
			if (c == '\n') {
				(*lineno)++;
				c = getc(f);
				continue;
			}
		}
		if (array_reserve((void **)line, cap, 1, len + 2) < 0)
			return -1;
		(*line)[len++] = (char)c;
		c = getc(f);
	}
	if (array_reserve((void **)line, cap, 1, len + 1) < 0)
		return -1;
	(*line)[len] = '\0';
	return 0;
}

/* One depmod.d file, as kmod 30 reads it: a line starting with '#' is a comment (only there);
 * "external" takes one directory; words past those a command takes are ignored; a line that
 * is not understood is an error naming the file and line, and is skipped. */
void cfg_parse_file(struct cfg *cfg, const char *path)
{
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;
	unsigned lineno = 0;

	if (strset_add(&cfg->config_files, path) < 0)
		tool_err("file parse %s: %s", path, strerror(ENOMEM));
	if (f == NULL) {
		tool_err("file parse %s: %m", path);
		return;
	}
	while (cfg_read_line(f, &line, &cap, &lineno) == 0) {
		char *save = NULL, *cmd, *w;
		int r = 0;

		if (line[0] == '#')
			continue;
		cmd = strtok_r(line, "\t ", &save);
		if (cmd == NULL)
			continue;
		if (streq(cmd, "search")) {
			while (r >= 0 && (w = strtok_r(NULL, "\t ", &save)) != NULL)
				r = cfg_add_search(cfg, w);
		} else if (streq(cmd, "override")) {
			char *modname = strtok_r(NULL, "\t ", &save);
			char *kversion = strtok_r(NULL, "\t ", &save);
			char *subdir = strtok_r(NULL, "\t ", &save);

			if (subdir == NULL)
				goto bad_line;
			if (kversion_matches(cfg, kversion))
				r = cfg_add_override(cfg, modname, subdir);
		} else if (streq(cmd, "external")) {
			char *kversion = strtok_r(NULL, "\t ", &save);
			char *dir = strtok_r(NULL, "\t ", &save);

			if (dir == NULL)
				goto bad_line;
			if (kversion_matches(cfg, kversion))
				r = cfg_add_external(cfg, dir);
		} else if (streq(cmd, "exclude")) {
			while (r >= 0 && (w = strtok_r(NULL, "\t ", &save)) != NULL)
				r = strset_add(&cfg->excludes, w);
		} else if (streq(cmd, "include") || streq(cmd, "make_map_files")) {
			/* kmod 30 accepts both and does nothing (it says so only at debug level) */
		} else {
		bad_line:
			tool_err("%s:%u: ignoring bad line starting with '%s'", path, lineno, cmd);
		}
		if (r < 0) {
			tool_err("%s:%u: %s", path, lineno, strerror(-r));
			return;
		}
	}
}

struct cfg_file {
	char *name; /* the base name: files sort by it, the first of a name wins */
	char *path;
};

static int cfg_file_cmp(const void *a, const void *b)
{
	return strcmp(((const struct cfg_file *)a)->name, ((const struct cfg_file *)b)->name);
}

static int cfg_files_add(struct cfg_file **files, size_t *n, size_t *cap, struct strset *seen,
			 const char *dir, const char *name)
{
	struct cfg_file cf;
	int r = strset_add(seen, name);

	if (r <= 0)
		return r;
	cf.name = strdup(name);
	if (cf.name == NULL || asprintf(&cf.path, "%s/%s", dir, name) < 0 ||
	    array_reserve((void **)files, cap, sizeof(cf), *n + 1) < 0) {
		free(cf.name);
		return -ENOMEM;
	}
	(*files)[(*n)++] = cf;
	return 0;
}

/* A config path (-C, or a default directory): a file is read whatever its name; a directory
 * gives its *.conf files, but none starting with '.' and no directory; a missing path nothing. */
static int cfg_files_list(struct cfg_file **files, size_t *n, size_t *cap, struct strset *seen,
			  const char *path)
{
	struct dirent *de;
	struct stat st;
	DIR *d;
	int r = 0;

	if (stat(path, &st) < 0)
		return 0;
	if (!S_ISDIR(st.st_mode)) {
		_cleanup_free_ char *copy = strdup(path);
		char *slash;

		if (copy == NULL)
			return -ENOMEM;
		slash = strrchr(copy, '/');
		if (slash == NULL)
			return cfg_files_add(files, n, cap, seen, ".", copy);
		*slash = '\0';
		return cfg_files_add(files, n, cap, seen, copy, slash + 1);
	}
	d = opendir(path);
	if (d == NULL) {
		tool_err("files list %s: %m", path);
		return 0;
	}
	while (r >= 0 && (de = readdir(d)) != NULL) {
		size_t len = strlen(de->d_name);

		if (de->d_name[0] == '.' || len < 6 || !streq(de->d_name + len - 5, ".conf"))
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, 0) == 0 && S_ISDIR(st.st_mode)) {
			tool_err("Directories inside directories are not supported: %s/%s", path,
				 de->d_name);
			continue;
		}
		r = cfg_files_add(files, n, cap, seen, path, de->d_name);
	}
	closedir(d);
	return r;
}

/* kmod's order: every file of the config paths (-C's, or the four depmod.d directories) sorted
 * by base name, whatever its directory; of two files with one name, the first path's wins. */
int cfg_load(struct cfg *cfg, char **config_paths, size_t n_config_paths)
{
	static const char *const dirs[] = { "/etc/depmod.d", "/run/depmod.d",
					    "/usr/local/lib/depmod.d", "/lib/depmod.d" };
	struct strset seen = { 0 };
	struct cfg_file *files = NULL;
	size_t n_files = 0, cap = 0, i;
	int r = 0;

	if (n_config_paths > 0) {
		for (i = 0; r >= 0 && i < n_config_paths; i++)
			r = cfg_files_list(&files, &n_files, &cap, &seen, config_paths[i]);
	} else {
		for (i = 0; r >= 0 && i < ARRAY_SIZE(dirs); i++)
			r = cfg_files_list(&files, &n_files, &cap, &seen, dirs[i]);
	}
	if (r >= 0 && n_files > 0)
		qsort(files, n_files, sizeof(*files), cfg_file_cmp);
	for (i = 0; i < n_files; i++) {
		if (r >= 0)
			cfg_parse_file(cfg, files[i].path);
		free(files[i].name);
		free(files[i].path);
	}
	free(files);
	strset_release(&seen);
	/* kmod's default: updates/ before everything else */
	if (r >= 0 && cfg->n_searches == 0 &&
	    ((r = cfg_add_search(cfg, "updates")) >= 0))
		r = cfg_add_search(cfg, "built-in");
	return r;
}
