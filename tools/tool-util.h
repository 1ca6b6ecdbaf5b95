/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What every kmodns tool does alike: messages in kmod's voice, JSON strings. */
#pragma once

#include <stdarg.h>
#include <stdio.h>

#include "libkmodns-util.h"

/* "<tool>: FATAL: ...", "<tool>: ERROR: ...", "<tool>: WARNING: ..." on stderr, like kmod's
 * tools (the caller exits after a fatal one). */
_printf_(1, 2) void tool_fatal(const char *fmt, ...);
_printf_(1, 2) void tool_err(const char *fmt, ...);
_printf_(1, 2) void tool_warn(const char *fmt, ...);

/* How many fatal errors, errors and warnings have been printed so far. */
unsigned tool_problem_count(void);
/* How many fatal errors and errors alone. */
unsigned tool_error_count(void);

/* A kmodns_log_fn that prints library messages as tool errors. */
_printf_(6, 0) void tool_log_kmodns(void *data, int priority, const char *file, int line,
				    const char *fn, const char *format, va_list args);

struct kmodns_load_verdict;
/* "refused: WHY", "warned: WHY" or "allowed: ...": a load verdict as modprobe -v and modinfo
 * --namespaces show it. The caller frees it; NULL without memory. */
char *tool_verdict_text(const struct kmodns_load_verdict *verdict);

/* Opens directory path for the *at() calls below; fd or -errno. */
int tool_dir_open(const char *path);

/* Creates a new, empty file ".<name>.XXXXXX" (six random characters) in the directory dirfd,
 * mode 0644 whatever the umask, never an existing file; its name goes to tmp (size bytes).
 * Every file a tool writes starts there, and is renamed (renameat, same dirfd) once complete:
 * all by file descriptor, so no path is looked up again after the directory was opened.
 * Returns the file descriptor (O_WRONLY, O_CLOEXEC), or -errno (tmp is then ""). */
int tool_tmpfile_at(int dirfd, const char *name, char *tmp, size_t size);

/* Writes s as a JSON string literal, quotes included. */
void json_write_string(FILE *out, const char *s);

/* kmod's alias key: '-' read as '_' except inside [...]; NULL for an unmatched bracket
 * (errno EINVAL) or no memory. */
char *alias_normalize(const char *alias);
