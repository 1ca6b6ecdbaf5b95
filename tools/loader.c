// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdarg.h>
#include <sys/utsname.h>

#include "loader.h"
#include "tool-util.h"

static bool log_use_syslog;
static int log_priority = LOG_WARNING;

static const char *priority_name(int prio)
{
	switch (prio) {
	case LOG_EMERG:
	case LOG_ALERT:
	case LOG_CRIT: return "FATAL";
	case LOG_ERR: return "ERROR";
	case LOG_WARNING: return "WARNING";
	case LOG_NOTICE: return "NOTICE";
	case LOG_INFO: return "INFO";
	default: return "DEBUG";
	}
}

void loader_log_open(bool use_syslog)
{
	log_use_syslog = use_syslog;
	if (use_syslog)
		openlog(program_invocation_short_name, LOG_CONS, LOG_DAEMON);
}

void loader_log_close(void)
{
	if (log_use_syslog)
		closelog();
}

void loader_log_set_priority(int priority)
{
	log_priority = priority;
}

int loader_log_get_priority(void)
{
	return log_priority;
}

/* prefix: libkmod's "file:line fn() " or "" */
static void log_text(int prio, const char *prefix, const char *msg)
{
	size_t len = strlen(msg);

	if (log_use_syslog)
		syslog(prio, "%s: %s%s", priority_name(prio), prefix, msg);
	else
		fprintf(stderr, "%s: %s: %s%s%s", program_invocation_short_name, priority_name(prio),
			prefix, msg, len > 0 && msg[len - 1] == '\n' ? "" : "\n");
}

_printf_(3, 0) static void log_line(int prio, const char *prefix, const char *fmt, va_list args)
{
	_cleanup_free_ char *msg = NULL;

	if (vasprintf(&msg, fmt, args) >= 0)
		log_text(prio, prefix, msg);
}

void loader_log(int prio, const char *fmt, ...)
{
	va_list args;

	if (prio > log_priority)
		return;
	va_start(args, fmt);
	log_line(prio, "", fmt, args);
	va_end(args);
	if (prio <= LOG_CRIT)
		exit(EXIT_FAILURE);
}

/* libkmod 30 does not know "weakdep" (kmod 33); we read those lines ourselves */
#define WEAKDEP_COMPLAINT "ignoring bad line starting with 'weakdep'"

static bool is_weakdep_complaint(const char *msg)
{
	return strstr(msg, WEAKDEP_COMPLAINT) != NULL;
}

static bool is_weakdep_complaint_line(const char *line, size_t len)
{
	return memmem(line, len, WEAKDEP_COMPLAINT, strlen(WEAKDEP_COMPLAINT)) != NULL;
}

_printf_(6, 0) static void log_from_libkmod(void *data, int priority, const char *file, int line,
					    const char *fn, const char *format, va_list args)
{
	_cleanup_free_ char *prefix = NULL;

	_cleanup_free_ char *msg = NULL;

	if (vasprintf(&msg, format, args) < 0 || is_weakdep_complaint(msg))
		return;
	if (asprintf(&prefix, "%s:%d %s() ", file, line, fn) < 0)
		return;
	log_text(priority, prefix, msg);
}

/*
 * What libkmod's own logger writes while kmod_new() reads the configuration is caught, so that
 * libkmod 30's complaints about weakdep, which it does not know, can be dropped. The logger
 * writes to the stream stderr names at kmod_new() and keeps it: stderr names this one meanwhile
 * (glibc lets a program assign stderr), which holds the text while catching and afterwards
 * passes all to the real stderr, so that tools that keep libkmod's logger (lsmod) still print
 * through it. No file descriptor, no system call.
 */
struct stderr_catcher {
	FILE *stream, *real;
	bool catching;
	char *text;
	size_t len;
};

static ssize_t stderr_catcher_write(void *cookie, const char *data, size_t n)
{
	struct stderr_catcher *c = cookie;
	char *p;

	if (!c->catching)
		return fwrite(data, 1, n, c->real) == n ? (ssize_t)n : -1;
	p = realloc(c->text, c->len + n + 1);
	if (p == NULL)
		return -1;
	memcpy(p + c->len, data, n);
	c->len += n;
	p[c->len] = '\0';
	c->text = p;
	return (ssize_t)n;
}

struct kmod_ctx *loader_kmod_new(const char *dirname, const char *const *config_paths)
{
	/* lives as long as the process: a libkmod context may keep writing to it */
	static struct stderr_catcher catcher;
	struct kmod_ctx *ctx;
	char *line, *next;

	if (catcher.stream == NULL) {
		catcher.stream = fopencookie(&catcher, "w",
					     (cookie_io_functions_t){ .write = stderr_catcher_write });
		if (catcher.stream == NULL)
			return kmod_new(dirname, config_paths);
		setvbuf(catcher.stream, NULL, _IONBF, 0);
	}
	catcher.real = stderr;
	catcher.catching = true;
	stderr = catcher.stream;
	ctx = kmod_new(dirname, config_paths);
	stderr = catcher.real;
	catcher.catching = false;
	for (line = catcher.text; line != NULL && *line != '\0'; line = next) {
		next = strchrnul(line, '\n');
		if (*next == '\n')
			next++;
		if (!is_weakdep_complaint_line(line, (size_t)(next - line)))
			fwrite(line, 1, (size_t)(next - line), stderr);
	}
	free(catcher.text);
	catcher.text = NULL;
	catcher.len = 0;
	return ctx;
}

_printf_(6, 0) static void log_from_libkmodns(void *data, int priority, const char *file, int line,
					      const char *fn, const char *format, va_list args)
{
	log_line(priority, "", format, args);
}

void loader_log_setup_kmod(struct kmod_ctx *ctx, struct kmodns_ctx *ns_ctx)
{
	if (ctx != NULL) {
		kmod_set_log_priority(ctx, log_priority);
		kmod_set_log_fn(ctx, log_from_libkmod, NULL);
	}
	if (ns_ctx != NULL) {
		kmodns_set_log_priority(ns_ctx, log_priority);
		kmodns_set_log_fn(ns_ctx, log_from_libkmodns, NULL);
	}
}

int module_options_from_args(char **args, int nargs, char **options)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int i;

	*options = NULL;
	if (f == NULL)
		return -ENOMEM;
	for (i = 0; i < nargs; i++) {
		const char *eq = strchr(args[i], '=');

		if (i > 0)
			fputc(' ', f);
		/* the kernel splits parameters on spaces unless the value is quoted */
		if (eq != NULL && eq[1] != '"' && eq[1] != '\'' && strchr(eq + 1, ' ') != NULL)
			fprintf(f, "%.*s\"%s\"", (int)(eq - args[i] + 1), args[i], eq + 1);
		else
			fputs(args[i], f);
	}
	if (memstream_close(f, &buf) < 0)
		return -ENOMEM;
	*options = buf;
	return 0;
}

/* ---- the pre-load check ------------------------------------------------------------------ */

int load_set_add(struct load_set *set, struct kmod_module *mod)
{
	if (array_reserve((void **)&set->mods, &set->capacity, sizeof(*set->mods), set->count + 1) < 0)
		return -ENOMEM;
	set->mods[set->count++] = kmod_module_ref(mod);
	return 0;
}

void load_set_release(struct load_set *set)
{
	size_t i;

	for (i = 0; i < set->count; i++)
		kmod_module_unref(set->mods[i]);
	free(set->mods);
	*set = (struct load_set){ 0 };
}

int loader_policy_source_add_file(struct loader_policy_source *source, const char *path)
{
	if (array_reserve((void **)&source->files, &source->capacity, sizeof(char *), source->n_files + 1) < 0)
		return -ENOMEM;
	source->files[source->n_files++] = path;
	return 0;
}

void loader_policy_source_release(struct loader_policy_source *source)
{
	free(source->files);
	*source = (struct loader_policy_source){ 0 };
}

int loader_policy_new(struct kmodns_ctx *ns_ctx, const struct loader_policy_source *source,
		      struct kmodns_policy **policy)
{
	if (source->n_files > 0)
		return kmodns_policy_new_from_files(ns_ctx, source->files, source->n_files, policy);
	return kmodns_policy_new_installed(ns_ctx, source->root, policy);
}

static int read_policy_source(struct kmodns_ctx *ns_ctx, void *source, struct kmodns_policy **policy)
{
	return loader_policy_new(ns_ctx, source, policy);
}

int loader_kernel_new(struct kmodns_ctx *ns_ctx, const char *release, const char *dirname,
		      const struct loader_policy_source *source, struct kmodns_kernel **kernel)
{
	struct utsname u;
	int r;

	if (release == NULL) {
		if (uname(&u) < 0)
			return -errno;
		release = u.release;
	}
	r = kmodns_kernel_new(ns_ctx, release, dirname, kernel);
	/* read when a module of the load set uses a namespace: most load sets use none */
	if (r >= 0)
		kmodns_kernel_set_policy_reader(*kernel, read_policy_source, (void *)source);
	return r;
}

/* One verdict printed as asked: a refusal as an error line, a warning, a note. */
static int report_verdict(const struct kmodns_load_verdict *v, unsigned flags)
{
	const char *name = kmodns_load_verdict_get_module(v);
	enum kmodns_load_status status = kmodns_load_verdict_get_status(v);
	_cleanup_free_ char *why = NULL;

	/* the reason is text built in a memory stream: only for the verdicts that print it */
	if (status != KMODNS_LOAD_ALLOWED && (why = kmodns_load_verdict_describe(v)) == NULL)
		return -ENOMEM;
	if (flags & LOAD_CHECK_SHOW) {
		_cleanup_free_ char *shown = tool_verdict_text(v);

		if (shown == NULL)
			return -ENOMEM;
		printf("namespaces %s: %s (%s)\n", name, shown,
		       kmodns_load_verdict_from_record(v) ? "depmod's record" : "module file");
	}
	if (status == KMODNS_LOAD_REFUSED)
		LOG_ERROR("could not insert '%s': it %s\n", name, why);
	else if (status == KMODNS_LOAD_WARNED && kmodns_load_verdict_get_policy_decision(v) >= 0)
		LOG_WARN("'%s' %s\n", name, why);
	else if (status == KMODNS_LOAD_WARNED)
		LOG_WARN("'%s' %s; the kernel loads it anyway (CONFIG_MODULE_ALLOW_MISSING_NAMESPACE_IMPORTS=y)\n",
			 name, why);
	else if (!kmodns_load_verdict_vmlinux_known(v))
		loader_log(LOG_NOTICE, "%s: namespaces of vmlinux's exports unknown (no build/Module.symvers when depmod ran); "
			 "those symbols are left to the kernel\n", name);
	return 0;
}

int load_set_check(struct kmodns_kernel *kernel, const struct load_set *set, unsigned flags)
{
	_cleanup_free_ const char **names = calloc(set->count, sizeof(*names));
	_cleanup_free_ const char **paths = calloc(set->count, sizeof(*paths));
	_cleanup_free_ struct kmodns_load_verdict **verdicts = calloc(set->count, sizeof(*verdicts));
	size_t i;
	int refused, err = 0;

	if (set->count == 0)
		return 0;
	if (names == NULL || paths == NULL || verdicts == NULL)
		return -ENOMEM;
	for (i = 0; i < set->count; i++) {
		names[i] = kmod_module_get_name(set->mods[i]);
		paths[i] = kmod_module_get_path(set->mods[i]);
	}
	refused = kmodns_kernel_check_load_set(kernel, names, paths, set->count,
					       flags & LOAD_CHECK_READ_FILES ? KMODNS_CHECK_READ_FILE : 0,
					       verdicts);
	if (refused < 0) {
		/* the module asked for comes last in the load set */
		LOG_ERROR("could not insert '%s': %s\n", names[set->count - 1], strerror(-refused));
		return refused;
	}
	for (i = 0; i < set->count; i++) {
		if (verdicts[i] != NULL && err == 0)
			err = report_verdict(verdicts[i], flags);
		kmodns_load_verdict_unref(verdicts[i]);
	}
	if (err < 0)
		return err;
	return refused > 0 ? -EPERM : 0;
}
