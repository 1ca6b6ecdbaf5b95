// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "libkmodns.h"
#include "tool-util.h"

static unsigned problems, errors;

unsigned tool_problem_count(void)
{
	return __atomic_load_n(&problems, __ATOMIC_RELAXED);
}

unsigned tool_error_count(void)
{
	return __atomic_load_n(&errors, __ATOMIC_RELAXED);
}

_printf_(2, 0) static void tool_vlog(const char *level, const char *fmt, va_list args)
{
	/* libkmodns logs from depmod's loader threads too */
	if (strcmp(level, "INFO") != 0)
		__atomic_add_fetch(&problems, 1, __ATOMIC_RELAXED);
	if (strcmp(level, "FATAL") == 0 || strcmp(level, "ERROR") == 0)
		__atomic_add_fetch(&errors, 1, __ATOMIC_RELAXED);
	fprintf(stderr, "%s: %s: ", program_invocation_short_name, level);
	vfprintf(stderr, fmt, args);
	fputc('\n', stderr);
}

void tool_fatal(const char *fmt, ...)
{
	va_list args;

	va_start(args, fmt);
	tool_vlog("FATAL", fmt, args);
	va_end(args);
}

void tool_err(const char *fmt, ...)
{
	va_list args;

	va_start(args, fmt);
	tool_vlog("ERROR", fmt, args);
	va_end(args);
}

void tool_warn(const char *fmt, ...)
{
	va_list args;

	va_start(args, fmt);
	tool_vlog("WARNING", fmt, args);
	va_end(args);
}

void tool_log_kmodns(void *data, int priority, const char *file, int line, const char *fn,
		     const char *format, va_list args)
{
	tool_vlog(priority <= LOG_ERR ? "ERROR" : priority == LOG_WARNING ? "WARNING" : "INFO",
		  format, args);
}

int tool_dir_open(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

int tool_tmpfile_at(int dirfd, const char *name, char *tmp, size_t size)
{
	static const char chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	unsigned attempt;
	int len = snprintf(tmp, size, ".%s.XXXXXX", name);

	if (len < 0 || (size_t)len >= size) {
		if (size > 0)
			tmp[0] = '\0';
		return -ENAMETOOLONG;
	}
	for (attempt = 0; attempt < 100; attempt++) {
		unsigned char rnd[6];
		size_t i;
		int fd;

		if (getrandom(rnd, sizeof(rnd), GRND_NONBLOCK) != (ssize_t)sizeof(rnd)) {
			/* no entropy yet (early boot): O_EXCL makes any name safe, only collisions cost */
			struct timespec ts;
			uint64_t x;

			clock_gettime(CLOCK_MONOTONIC, &ts);
			x = (uint64_t)ts.tv_nsec * 2654435761u ^ (uint64_t)getpid() << 20 ^ attempt;
			for (i = 0; i < sizeof(rnd); i++, x >>= 8)
				rnd[i] = (unsigned char)x;
		}
		for (i = 0; i < sizeof(rnd); i++)
			tmp[len - 6 + (int)i] = chars[rnd[i] % (sizeof(chars) - 1)];
		fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd >= 0) {
			/* 0644 as the files it replaces, whatever the umask */
			if (fchmod(fd, 0644) < 0) {
				int r = -errno;
				unlinkat(dirfd, tmp, 0);
				close(fd);
				tmp[0] = '\0';
				return r;
			}
			return fd;
		}
		if (errno != EEXIST) {
			int r = -errno;
			tmp[0] = '\0';
			return r;
		}
	}
	tmp[0] = '\0';
	return -EEXIST;
}

void json_write_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", out);
		else if (c == '\t')
			fputs("\\t", out);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

/* kmod's alias normalisation: '-' read as '_' except inside [...]; NULL for an unmatched bracket. */
char *alias_normalize(const char *alias)
{
	char *out = strdup(alias), *q = out;
	const char *p;

	if (out == NULL)
		return NULL;
	for (p = alias; *p; p++) {
		if (*p == ']') {
			free(out);
			return NULL;
		}
		if (*p == '[') {
			const char *close = strchr(p, ']');
			if (close == NULL) {
				free(out);
				return NULL;
			}
			memcpy(q, p, (size_t)(close - p) + 1);
			q += close - p + 1;
			p = close;
			continue;
		}
		*q++ = *p == '-' ? '_' : *p;
	}
	*q = '\0';
	return out;
}

char *tool_verdict_text(const struct kmodns_load_verdict *v)
{
	enum kmodns_load_status status = kmodns_load_verdict_get_status(v);
	_cleanup_free_ char *why = kmodns_load_verdict_describe(v);
	char *text = NULL;

	if (why == NULL)
		return NULL;
	if (status == KMODNS_LOAD_ALLOWED)
		return strdup(why);
	if (asprintf(&text, "%s: %s", status == KMODNS_LOAD_REFUSED ? "refused" : "warned", why) < 0)
		return NULL;
	return text;
}
