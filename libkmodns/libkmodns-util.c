// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "libkmodns-util.h"

int array_reserve(void **array, size_t *capacity, size_t elem_size, size_t n)
{
	size_t cap = *capacity ? *capacity : 8;
	void *p;

	if (n <= *capacity)
		return 0;
	while (cap < n) {
		if (cap > SIZE_MAX / 2 / elem_size)
			return -ENOMEM;
		cap *= 2;
	}
	p = realloc(*array, cap * elem_size);
	if (p == NULL)
		return -ENOMEM;
	*array = p;
	*capacity = cap;
	return 0;
}

/* FNV-1a: short keys, no adversary. */
uint32_t hash_string(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

static long strset_slot(const struct strset *set, const char *s)
{
	size_t mask = set->nslots - 1, i = hash_string(s) & mask;

	for (;; i = (i + 1) & mask) {
		uint32_t v = set->slots[i];
		if (v == 0 || streq(set->items[v - 1], s))
			return (long)i;
	}
}

long strset_find(const struct strset *set, const char *s)
{
	uint32_t v;

	if (set->nslots == 0)
		return -1;
	v = set->slots[strset_slot(set, s)];
	return v == 0 ? -1 : (long)v - 1;
}

static int strset_rehash(struct strset *set, size_t nslots)
{
	uint32_t *slots = calloc(nslots, sizeof(*slots));
	size_t i;

	if (slots == NULL)
		return -ENOMEM;
	free(set->slots);
	set->slots = slots;
	set->nslots = nslots;
	for (i = 0; i < set->count; i++)
		set->slots[strset_slot(set, set->items[i])] = (uint32_t)i + 1;
	return 0;
}

int strset_add(struct strset *set, const char *s)
{
	char *copy;
	int r;

	if (strset_find(set, s) >= 0)
		return 0;
	if ((set->count + 1) * 2 > set->nslots) {
		r = strset_rehash(set, set->nslots ? set->nslots * 2 : 16);
		if (r < 0)
			return r;
	}
	r = array_reserve((void **)&set->items, &set->capacity, sizeof(char *), set->count + 1);
	if (r < 0)
		return r;
	copy = strdup(s);
	if (copy == NULL)
		return -ENOMEM;
	set->items[set->count++] = copy;
	set->slots[strset_slot(set, copy)] = (uint32_t)set->count;
	return 1;
}

void strset_release(struct strset *set)
{
	size_t i;

	for (i = 0; i < set->count; i++)
		free(set->items[i]);
	free(set->items);
	free(set->slots);
	memset(set, 0, sizeof(*set));
}

int read_file(const char *path, char **data, size_t *size)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	return read_fd(fd, data, size);
}

int read_fd(int fd, char **data, size_t *size)
{
	_cleanup_free_ char *buf = NULL;
	struct stat st;
	size_t len = 0, cap;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	/* Regular files are read in one go; pipes and the like grow the buffer. */
	cap = S_ISREG(st.st_mode) ? (size_t)st.st_size + 1 : 65536;
	buf = malloc(cap);
	if (buf == NULL)
		return -ENOMEM;
	for (;;) {
		ssize_t n;
		if (len == cap) {
			char *p;
			if (cap > SIZE_MAX / 2)
				return -EFBIG;
			p = realloc(buf, cap * 2);
			if (p == NULL)
				return -ENOMEM;
			buf = p;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0'; /* always room: the buffer grows before it is full */
	*data = TAKE_PTR(buf);
	*size = len;
	return 0;
}

char *modname_from_path(const char *path, size_t len, char *name)
{
	const char *base = path, *p, *end = path + len;
	char *q = name;

	for (p = path; p < end; p++)
		if (*p == '/')
			base = p + 1;
	/* forward copy: safe in place, as name <= base */
	for (p = base; p < end && *p != '.'; p++)
		*q++ = *p == '-' ? '_' : *p;
	*q = '\0';
	return name;
}

char *modname_from_path_dup(const char *path, size_t len)
{
	char *name = malloc(len + 1);

	return name ? modname_from_path(path, len, name) : NULL;
}

struct arena_block {
	struct arena_block *next;
	size_t used, size;
	char data[];
};

char *arena_strndup(struct arena *arena, const char *s, size_t len)
{
	struct arena_block *b = arena->head;
	char *p;

	if (b == NULL || b->size - b->used < len + 1) {
		/* small first, doubling: thousands of modules each hold a few strings */
		size_t size = b == NULL ? 1024 : b->size < 65536 ? b->size * 2 : 65536;
		if (size < len + 1)
			size = len + 1;
		b = malloc(sizeof(*b) + size);
		if (b == NULL)
			return NULL;
		b->size = size;
		b->used = 0;
		b->next = arena->head;
		arena->head = b;
	}
	p = b->data + b->used;
	memcpy(p, s, len);
	p[len] = '\0';
	b->used += len + 1;
	return p;
}

char *arena_strdup(struct arena *arena, const char *s)
{
	return arena_strndup(arena, s, strlen(s));
}

void arena_release(struct arena *arena)
{
	while (arena->head) {
		struct arena_block *b = arena->head;
		arena->head = b->next;
		free(b);
	}
}

int memstream_close(FILE *f, char **buf)
{
	bool lost = ferror(f) != 0;

	if (fclose(f) != 0 || *buf == NULL || lost) {
		free(*buf);
		*buf = NULL;
		return -ENOMEM;
	}
	return 0;
}
