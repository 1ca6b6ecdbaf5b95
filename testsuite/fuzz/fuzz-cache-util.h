/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * depmod's cache and run stamp carry a CRC-32 of their body: the harnesses set it (and the
 * body size) on each input so that mutations reach the body. Their seeds are written by the
 * library's own writer, from the fixture modules, under one file key (fuzz_key) that the
 * harnesses ask for: KMODNS_FUZZ_SEED_FROM=FIXTURE_DIR KMODNS_FUZZ_SEED_TO=FILE HARNESS.
 */
#pragma once

#include <dirent.h>
#include <sys/stat.h>
#include <zlib.h>

#include "fuzz-util.h"
#include "libkmodns-cache.h"

#define FUZZ_CACHE_HEADER_SIZE 32
#define FUZZ_VMLINUZ_PATH "/boot/vmlinuz-fuzz"

static inline struct stat fuzz_key(void)
{
	struct stat st = { .st_size = 1, .st_ino = 4 };

	st.st_mtim.tv_sec = 2;
	st.st_mtim.tv_nsec = 3;
	return st;
}

/* A copy of data with the header's body size and CRC made to fit, as a file. */
static inline const char *fuzz_sealed_file(const uint8_t *data, size_t size)
{
	uint8_t *copy = malloc(size ? size : 1);
	const char *path;

	if (copy == NULL)
		abort();
	memcpy(copy, data, size);
	if (size >= FUZZ_CACHE_HEADER_SIZE) {
		uint64_t body_size = size - FUZZ_CACHE_HEADER_SIZE;
		uint32_t crc = (uint32_t)crc32(0, copy + FUZZ_CACHE_HEADER_SIZE, (uInt)body_size);

		memcpy(copy + 16, &body_size, 8);
		memcpy(copy + 24, &crc, 4);
	}
	path = fuzz_file(copy, size);
	free(copy);
	return path;
}

/* Calls fn for each *.ko* of dir (the fixtures), read; their paths are their names. */
static inline void fuzz_each_fixture(const char *dir, void (*fn)(void *data, struct kmodns_module *mod),
				     void *data)
{
	struct dirent *de;
	DIR *d = opendir(dir);

	if (d == NULL)
		abort();
	while ((de = readdir(d)) != NULL) {
		char path[4096];
		struct kmodns_module *mod;

		if (strstr(de->d_name, ".ko") == NULL)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (kmodns_module_new_from_path(fuzz_ctx(), path, 0, &mod) == 0) {
			fn(data, mod);
			kmodns_module_unref(mod);
		}
	}
	closedir(d);
}
