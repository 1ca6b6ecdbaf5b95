/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Small utilities shared by libkmodns and the tools: ownership, arrays, a string set. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define _cleanup_(fn) __attribute__((cleanup(fn)))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _unused_ __attribute__((unused))
#define KMODNS_EXPORT __attribute__((visibility("default")))
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static inline void freep(void *p) { free(*(void **)p); }
static inline void fclosep(FILE **f) { if (*f) fclose(*f); }
static inline void closep(int *fd) { if (*fd >= 0) close(*fd); }
#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_fclose_ _cleanup_(fclosep)
#define _cleanup_close_ _cleanup_(closep)

/* Hands ownership out of a _cleanup_ variable. */
#define TAKE_PTR(p) ({ __typeof__(p) _p = (p); (p) = NULL; _p; })
#define TAKE_FD(fd) ({ int _fd = (fd); (fd) = -1; _fd; })

static inline bool streq(const char *a, const char *b) { return strcmp(a, b) == 0; }
static inline bool startswith(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Grows *array (of *capacity elements of elem_size) to hold at least n; -ENOMEM on failure. */
int array_reserve(void **array, size_t *capacity, size_t elem_size, size_t n);

/* An insertion-ordered set of strings with O(1) lookup; strings are copied. */
struct strset {
	char **items;
	size_t count, capacity;
	uint32_t *slots; /* 0 = empty, else index + 1 */
	size_t nslots;
};
/* 1 if added, 0 if already present, -ENOMEM. */
int strset_add(struct strset *set, const char *s);
/* Index of s, or -1. */
long strset_find(const struct strset *set, const char *s);
void strset_release(struct strset *set);

uint32_t hash_string(const char *s);

/* Reads a whole file, NUL-terminated after its last byte; -errno on failure. */
int read_file(const char *path, char **data, size_t *size);
/* the same, of an open file from where it stands */
int read_fd(int fd, char **data, size_t *size);

/* kmod's module name of a path: its base name up to the first '.', each '-' as '_'
 * ("kernel/fs/ext4-x.ko.xz" -> "ext4_x"). path is len bytes, not necessarily NUL-terminated;
 * name has room for len + 1 bytes and may be path itself. Returns name. */
char *modname_from_path(const char *path, size_t len, char *name);
/* The same in a new string; NULL without memory. */
char *modname_from_path_dup(const char *path, size_t len);

/* A string arena: copies stay valid until the arena is released. */
struct arena {
	struct arena_block *head;
};
char *arena_strndup(struct arena *arena, const char *s, size_t len);
char *arena_strdup(struct arena *arena, const char *s);
void arena_release(struct arena *arena);

/* Closes a stream of open_memstream() whose buffer is *buf: -ENOMEM (and *buf freed, NULL)
 * when any of the text was lost. glibc's fclose reports no failure of its last realloc: it
 * frees the text and leaves *buf NULL. */
int memstream_close(FILE *f, char **buf);
