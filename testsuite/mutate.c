// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mutate IN OUT KIND [SECTION]: copies a fixture module and damages one thing,
 * for the bad-input tests. libelf finds where a field lives; the damage is a
 * raw byte patch in the file's byte order, so the reader sees it unfiltered.
 *
 * KIND: shoff-huge shnum-huge shstrndx-bad class-bad data-bad type-exec
 *       section-offset section-size section-name fill-A (need SECTION)
 *       symbol-name symtab-link kstrtabns-offset reloc-symbol
 *
 * For real kernels' modules (t-qemu.sh): the output has its module signature cut off
 * (a patched module would fail the signature check before the namespace check).
 *   strip-sig                   only that
 *   modinfo-replace OLD NEW     the .modinfo record OLD (or the first one starting with OLD
 *                               when OLD ends in '=') becomes NEW, NUL-padded; NEW no longer
 *                               ("" removes a record, e.g. an import_ns)
 *   export-ns OLD NEW           every namespace string OLD in __ksymtab_strings becomes NEW
 *   rename OLD NEW              the module's name (.modinfo name= and this_module), same length
 */
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static unsigned char *image;
static size_t image_size;
static int is64, big;

static void die(const char *msg)
{
	fprintf(stderr, "mutate: %s\n", msg);
	exit(2);
}

static void put(uint64_t at, uint64_t value, size_t width)
{
	size_t i;

	if (at + width > image_size)
		die("patch outside the file");
	for (i = 0; i < width; i++) {
		size_t k = big ? width - 1 - i : i;
		image[at + k] = (unsigned char)(value >> (8 * i));
	}
}

static Elf_Scn *find_section(Elf *elf, const char *name, GElf_Shdr *shdr)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx) < 0)
		die("no section names");
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		const char *n;
		gelf_getshdr(scn, shdr);
		n = elf_strptr(elf, shstrndx, shdr->sh_name);
		if (n && strcmp(n, name) == 0)
			return scn;
	}
	die("no such section");
	return NULL;
}

/* File offset of section header `index`. */
static uint64_t shdr_at(const GElf_Ehdr *eh, size_t index)
{
	return eh->e_shoff + index * eh->e_shentsize;
}

/* Offset of the first symbol whose name starts with prefix (or any named one for ""). */
static uint64_t symbol_at(Elf *elf, const char *prefix)
{
	GElf_Shdr sh;
	Elf_Scn *scn = find_section(elf, ".symtab", &sh);
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t i, n = sh.sh_size / sh.sh_entsize;

	for (i = 1; i < n; i++) {
		GElf_Sym sym;
		const char *name;
		gelf_getsym(d, (int)i, &sym);
		name = elf_strptr(elf, sh.sh_link, sym.st_name);
		if (name && name[0] && strncmp(name, prefix, strlen(prefix)) == 0)
			return sh.sh_offset + i * sh.sh_entsize;
	}
	die("no such symbol");
	return 0;
}

/* ---- real modules: signature, .modinfo records, namespace strings, name ---------------- */

#define SIG_MAGIC "~Module signature appended~\n"

/* Cuts an appended signature: magic, then a 12-byte trailer ending in the big-endian length. */
static void strip_signature(void)
{
	size_t magic = sizeof(SIG_MAGIC) - 1, sig_len;
	const unsigned char *t;

	if (image_size < magic + 12 || memcmp(image + image_size - magic, SIG_MAGIC, magic) != 0)
		return;
	t = image + image_size - magic - 12;
	sig_len = (size_t)t[8] << 24 | (size_t)t[9] << 16 | (size_t)t[10] << 8 | t[11];
	if (sig_len + magic + 12 > image_size)
		die("signature longer than the file");
	image_size -= sig_len + magic + 12;
}

/* Replaces NUL-delimited strings of section name matching old (prefix when old ends in '='
 * and prefix is set) by new, NUL-padded; returns how many. */
static int replace_strings(Elf *elf, const char *secname, const char *old, const char *new,
			   int prefix, int max)
{
	GElf_Shdr sh;
	size_t olen = strlen(old), nlen = strlen(new), i = 0;
	int n = 0;

	find_section(elf, secname, &sh);
	if (sh.sh_offset + sh.sh_size > image_size)
		die("section outside the file");
	while (i < sh.sh_size && (max == 0 || n < max)) {
		unsigned char *s = image + sh.sh_offset + i;
		size_t len = strnlen((char *)s, sh.sh_size - i);
		int match = prefix && olen > 0 && old[olen - 1] == '=' ?
				    len >= olen && memcmp(s, old, olen) == 0 :
				    len == olen && memcmp(s, old, olen) == 0;

		if (match) {
			if (nlen > len)
				die("the new string is longer than the old one");
			memset(s, 0, len);
			memcpy(s, new, nlen);
			n++;
		}
		i += len + 1;
	}
	return n;
}

/* The first NUL-terminated old in section secname becomes new (same length). */
static void replace_name(Elf *elf, const char *secname, const char *old, const char *new)
{
	GElf_Shdr sh;
	size_t len = strlen(old) + 1, i;

	find_section(elf, secname, &sh);
	if (strlen(new) != strlen(old))
		die("a new name must have the old one's length");
	for (i = 0; i + len <= sh.sh_size && sh.sh_offset + i + len <= image_size; i++) {
		unsigned char *s = image + sh.sh_offset + i;
		if (memcmp(s, old, len) == 0 && (i == 0 || s[-1] == 0)) {
			memcpy(s, new, len);
			return;
		}
	}
	die("name not found in this_module");
}

int main(int argc, char *argv[])
{
	const char *kind, *secname;
	struct stat st;
	GElf_Ehdr eh;
	GElf_Shdr sh;
	unsigned char *copy;
	Elf *elf;
	int fd;

	if (argc < 4)
		die("usage: mutate IN OUT KIND [SECTION]");
	kind = argv[3];
	secname = argc > 4 ? argv[4] : NULL;
	fd = open(argv[1], O_RDONLY);
	if (fd < 0 || fstat(fd, &st) < 0)
		die("cannot open input");
	image_size = (size_t)st.st_size;
	image = malloc(image_size);
	if (image == NULL || read(fd, image, image_size) != (ssize_t)image_size)
		die("cannot read input");
	close(fd);
	elf_version(EV_CURRENT);
	/* libelf reads a private copy: the patches must not move what it found. */
	copy = malloc(image_size);
	if (copy == NULL)
		die("no memory");
	memcpy(copy, image, image_size);
	elf = elf_memory((char *)copy, image_size);
	if (elf == NULL || gelf_getehdr(elf, &eh) == NULL)
		die("input is not ELF");
	is64 = gelf_getclass(elf) == ELFCLASS64;
	big = eh.e_ident[EI_DATA] == ELFDATA2MSB;

	if (strcmp(kind, "strip-sig") == 0) {
		strip_signature();
	} else if (strcmp(kind, "modinfo-replace") == 0 || strcmp(kind, "export-ns") == 0 ||
		   strcmp(kind, "rename") == 0) {
		const char *arg2 = argc > 5 ? argv[5] : NULL;
		if (secname == NULL || arg2 == NULL)
			die("usage: mutate IN OUT KIND OLD NEW");
		if (strcmp(kind, "modinfo-replace") == 0) {
			if (replace_strings(elf, ".modinfo", secname, arg2, 1, 1) != 1)
				die("no such .modinfo record");
		} else if (strcmp(kind, "export-ns") == 0) {
			if (replace_strings(elf, "__ksymtab_strings", secname, arg2, 0, 0) < 1)
				die("no such namespace string");
		} else {
			char oldrec[256], newrec[256];
			snprintf(oldrec, sizeof(oldrec), "name=%s", secname);
			snprintf(newrec, sizeof(newrec), "name=%s", arg2);
			if (strlen(secname) != strlen(arg2))
				die("a new name must have the old one's length");
			if (replace_strings(elf, ".modinfo", oldrec, newrec, 0, 1) != 1)
				die("no name= record");
			replace_name(elf, ".gnu.linkonce.this_module", secname, arg2);
		}
		strip_signature();
	} else if (strcmp(kind, "shoff-huge") == 0) {
		put(is64 ? 40 : 32, is64 ? 0x7ffffffff000ull : 0x7ffff000u, is64 ? 8 : 4);
	} else if (strcmp(kind, "shnum-huge") == 0) {
		put(is64 ? 60 : 48, 0xfff0, 2);
	} else if (strcmp(kind, "shstrndx-bad") == 0) {
		put(is64 ? 62 : 50, eh.e_shnum + 7u, 2);
	} else if (strcmp(kind, "class-bad") == 0) {
		image[EI_CLASS] = 7;
	} else if (strcmp(kind, "data-bad") == 0) {
		image[EI_DATA] = 9;
	} else if (strcmp(kind, "type-exec") == 0) {
		put(16, ET_EXEC, 2);
	} else if (strcmp(kind, "symtab-link") == 0) {
		Elf_Scn *scn = find_section(elf, ".symtab", &sh);
		put(shdr_at(&eh, elf_ndxscn(scn)) + (is64 ? 40 : 24), 0x7fff, 4);
	} else if (strcmp(kind, "symbol-name") == 0) {
		put(symbol_at(elf, ""), 0x7ffffff0, 4);
	} else if (strcmp(kind, "kstrtabns-offset") == 0) {
		put(symbol_at(elf, "__kstrtabns_") + (is64 ? 8 : 4), 0x7ffffff0, is64 ? 8 : 4);
	} else if (strcmp(kind, "reloc-symbol") == 0) {
		Elf_Scn *scn = find_section(elf, secname ? secname : ".rela__ksymtab_gpl", &sh);
		uint64_t at = sh.sh_offset;
		/* r_info: the symbol index is the high half (64-bit) or the high 24 bits (32-bit). */
		if (is64)
			put(at + 8, (0x7fffffull << 32) | (uint32_t)0x2, 8);
		else
			put(at + 4, (0x7fffffu << 8) | 0x2, 4);
		(void)scn;
	} else if (secname != NULL) {
		Elf_Scn *scn = find_section(elf, secname, &sh);
		uint64_t at = shdr_at(&eh, elf_ndxscn(scn));
		if (strcmp(kind, "section-offset") == 0)
			put(at + (is64 ? 24 : 16), image_size + 4096, is64 ? 8 : 4);
		else if (strcmp(kind, "section-size") == 0)
			put(at + (is64 ? 32 : 20), is64 ? 0x7fffffffffffull : 0x7fffffffu, is64 ? 8 : 4);
		else if (strcmp(kind, "section-name") == 0)
			put(at, 0x7ffffff0, 4);
		else if (strcmp(kind, "fill-A") == 0)
			memset(image + sh.sh_offset, 'A', sh.sh_size);
		else
			die("unknown kind");
	} else {
		die("unknown kind, or SECTION missing");
	}
	elf_end(elf);
	free(copy);
	fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, image, image_size) != (ssize_t)image_size || close(fd) < 0)
		die("cannot write output");
	free(image);
	return 0;
}
