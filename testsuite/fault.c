// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * kmodns-fault.so: an LD_PRELOAD object that injects faults into a tool (testsuite/t-fault.sh).
 *
 *  - KMODNS_FAULT_ALLOC=N makes the Nth call of malloc, calloc, realloc, strdup or strndup
 *    (counted from the start of the process, all threads) fail with ENOMEM, once;
 *    KMODNS_FAULT_ALLOC_SITE=N fails instead the first call made from the Nth allocation site
 *    (its caller and the caller of that, never seen before in this process; run under setarch -R,
 *    so that stacks have the same addresses in every run);
 *    KMODNS_FAULT_ALLOC_COUNT=FILE gets "CALLS SITES" at exit (sites only in the site mode).
 *  - KMODNS_FAULT_PATH=SUBSTRING with KMODNS_FAULT_READ=eio|short: on files opened through a
 *    path containing SUBSTRING, read and pread fail with EIO (eio), or the first returns half of
 *    what was asked and the rest end of file, as a file shrunk under the reader (short); mmap of
 *    such a file fails with EIO in both modes, so readers that map fall back to reading.
 * Built without sanitizers; under ASan its allocator wins, so only the read faults apply.
 */
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

void *__libc_malloc(size_t size);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t size);

static unsigned long alloc_fail_at, alloc_calls, site_fail_at, alloc_sites;

/* The call stacks seen so far, by hash (open addressing, no allocation: we are the allocator). */
#define SITE_SLOTS 65536
static uint64_t sites[SITE_SLOTS];
static int sites_lock;

/* ---- allocations ---------------------------------------------------------------------------- */

__attribute__((constructor)) static void fault_init(void)
{
	const char *n = getenv("KMODNS_FAULT_ALLOC");

	if (n != NULL)
		alloc_fail_at = strtoul(n, NULL, 10);
	n = getenv("KMODNS_FAULT_ALLOC_SITE");
	if (n != NULL) {
		void *frame;

		site_fail_at = strtoul(n, NULL, 10);
		backtrace(&frame, 1); /* loads libgcc_s now, not inside an allocation */
	}
}

__attribute__((destructor)) static void fault_fini(void)
{
	const char *path = getenv("KMODNS_FAULT_ALLOC_COUNT");
	char buf[32];
	int fd, len;

	if (path == NULL)
		return;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	len = snprintf(buf, sizeof(buf), "%lu %lu\n", __atomic_load_n(&alloc_calls, __ATOMIC_RELAXED),
		       __atomic_load_n(&alloc_sites, __ATOMIC_RELAXED));
	if (write(fd, buf, (size_t)len) < 0)
		len = 0;
	close(fd);
}

static __thread bool in_backtrace;

/* Whether the caller's stack is a site never seen before, and the Nth such. */
static bool is_site_to_fail(void)
{
	void *frames[4];
	uint64_t h = 1469598103934665603ull;
	size_t slot;
	int n, i;
	bool fail = false;

	in_backtrace = true;
	n = backtrace(frames, 4);
	/* frames 0-1 are ours; the rest by address: the same in every run under setarch -R */
	for (i = 2; i < n; i++)
		h = (h ^ (uintptr_t)frames[i]) * 1099511628211ull;
	in_backtrace = false;
	h |= 1; /* 0 marks a free slot */
	while (__atomic_exchange_n(&sites_lock, 1, __ATOMIC_ACQUIRE))
		;
	for (slot = h % SITE_SLOTS; sites[slot] != 0 && sites[slot] != h; slot = (slot + 1) % SITE_SLOTS)
		;
	if (sites[slot] == 0 && alloc_sites < SITE_SLOTS - 1) {
		sites[slot] = h;
		fail = ++alloc_sites == site_fail_at;
	}
	__atomic_store_n(&sites_lock, 0, __ATOMIC_RELEASE);
	return fail;
}

/* Whether this allocation is the one to fail; with KMODNS_FAULT_BACKTRACE set, its caller's
 * stack goes to stderr (to find the site a test names). */
static bool alloc_fails(void)
{
	unsigned long n = __atomic_add_fetch(&alloc_calls, 1, __ATOMIC_RELAXED);

	if (in_backtrace)
		return false;
	/* past the site to fail, no more stacks to take */
	if (site_fail_at > 0 ? alloc_sites >= site_fail_at || !is_site_to_fail() : n != alloc_fail_at)
		return false;
	if (getenv("KMODNS_FAULT_BACKTRACE") != NULL) {
		void *frames[32];

		in_backtrace = true;
		backtrace_symbols_fd(frames, backtrace(frames, 32), STDERR_FILENO);
		in_backtrace = false;
	}
	errno = ENOMEM;
	return true;
}

EXPORT void *malloc(size_t size)
{
	return alloc_fails() ? NULL : __libc_malloc(size);
}

EXPORT void *calloc(size_t n, size_t size)
{
	return alloc_fails() ? NULL : __libc_calloc(n, size);
}

EXPORT void *realloc(void *p, size_t size)
{
	return alloc_fails() ? NULL : __libc_realloc(p, size);
}

EXPORT char *strndup(const char *s, size_t n)
{
	size_t len = strnlen(s, n);
	char *copy = alloc_fails() ? NULL : __libc_malloc(len + 1);

	if (copy == NULL)
		return NULL;
	memcpy(copy, s, len);
	copy[len] = '\0';
	return copy;
}

EXPORT char *strdup(const char *s)
{
	return strndup(s, strlen(s));
}

/* ---- reads of one file ----------------------------------------------------------------------- */

#define MAX_FDS 1024
static bool faulty_fd[MAX_FDS];
static bool short_read_done[MAX_FDS];

static bool path_is_faulty(const char *path)
{
	const char *sub = getenv("KMODNS_FAULT_PATH");

	return sub != NULL && *sub != '\0' && path != NULL && strstr(path, sub) != NULL;
}

static bool short_mode(void)
{
	const char *mode = getenv("KMODNS_FAULT_READ");

	return mode != NULL && strcmp(mode, "short") == 0;
}

static int track(int fd, const char *path)
{
	if (fd >= 0 && fd < MAX_FDS) {
		faulty_fd[fd] = path_is_faulty(path);
		short_read_done[fd] = false;
	}
	return fd;
}

static bool is_faulty(int fd)
{
	return fd >= 0 && fd < MAX_FDS && faulty_fd[fd];
}

#define NEXT(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))

EXPORT int open(const char *path, int flags, ...)
{
	mode_t mode = 0;
	va_list ap;

	if (flags & (O_CREAT | O_TMPFILE)) {
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	return track(NEXT(open)(path, flags, mode), path);
}

EXPORT int open64(const char *path, int flags, ...)
{
	mode_t mode = 0;
	va_list ap;

	if (flags & (O_CREAT | O_TMPFILE)) {
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	return track(NEXT(open64)(path, flags, mode), path);
}

EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = 0;
	va_list ap;

	if (flags & (O_CREAT | O_TMPFILE)) {
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	return track(NEXT(openat)(dirfd, path, flags, mode), path);
}

EXPORT int close(int fd)
{
	if (fd >= 0 && fd < MAX_FDS)
		faulty_fd[fd] = false;
	return NEXT(close)(fd);
}

/* What a faulty read returns instead of reading count bytes: -1 (EIO), half, or 0 (the end). */
static ssize_t faulty_read_size(int fd, size_t count)
{
	if (!short_mode()) {
		errno = EIO;
		return -1;
	}
	if (short_read_done[fd])
		return 0;
	short_read_done[fd] = true;
	return (ssize_t)(count / 2);
}

EXPORT ssize_t read(int fd, void *buf, size_t count)
{
	ssize_t n;

	if (!is_faulty(fd))
		return NEXT(read)(fd, buf, count);
	n = faulty_read_size(fd, count);
	return n > 0 ? NEXT(read)(fd, buf, (size_t)n) : n;
}

EXPORT ssize_t pread(int fd, void *buf, size_t count, off_t offset)
{
	ssize_t n;

	if (!is_faulty(fd))
		return NEXT(pread)(fd, buf, count, offset);
	n = faulty_read_size(fd, count);
	return n > 0 ? NEXT(pread)(fd, buf, (size_t)n, offset) : n;
}

EXPORT ssize_t pread64(int fd, void *buf, size_t count, off_t offset)
{
	return pread(fd, buf, count, offset);
}

EXPORT void *mmap(void *addr, size_t length, int prot, int flags, int fd, off_t offset)
{
	if (!(flags & MAP_ANONYMOUS) && is_faulty(fd)) {
		errno = EIO;
		return MAP_FAILED;
	}
	return NEXT(mmap)(addr, length, prot, flags, fd, offset);
}

EXPORT void *mmap64(void *addr, size_t length, int prot, int flags, int fd, off_t offset)
{
	return mmap(addr, length, prot, flags, fd, offset);
}
