// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * vmlinux's exports read from a kernel image: an x86 bzImage (vmlinuz) whose
 * payload is the compressed vmlinux ELF, or that ELF itself. The export tables
 * are those the kernel itself searches: __ksymtab* entries {value, name,
 * namespace} as PREL32 offsets or pointers, names in __ksymtab_strings, GPL-only
 * flags in __kflagstab (7.1+), CRCs in the parallel __kcrctab* arrays.
 */
#include <errno.h>
#include <inttypes.h>

#include "libkmodns-private.h"
#include "libkmodns-dl.h"

/* The x86 boot protocol's setup header (Documentation/arch/x86/boot.rst). */
#define BZ_SETUP_SECTS 0x1f1
#define BZ_HEADER_MAGIC 0x202 /* "HdrS" */
#define BZ_VERSION 0x206
#define BZ_PAYLOAD_OFFSET 0x248 /* from the start of the protected-mode code */
#define BZ_PAYLOAD_LENGTH 0x24c
#define BZ_HEADER_END 0x250
#define BZ_PAYLOAD_VERSION 0x208 /* boot protocol 2.08 added the payload fields */

static const struct {
	const char *ksymtab, *kcrctab;
	enum kmodns_export_type type;
} tables[] = {
	{ "__ksymtab", "__kcrctab", KMODNS_EXPORT_SYMBOL },
	{ "__ksymtab_gpl", "__kcrctab_gpl", KMODNS_EXPORT_SYMBOL_GPL },
	{ "__ksymtab_gpl_future", "__kcrctab_gpl_future", KMODNS_EXPORT_SYMBOL_GPL_FUTURE },
	{ "__ksymtab_unused", "__kcrctab_unused", KMODNS_EXPORT_UNUSED_SYMBOL },
	{ "__ksymtab_unused_gpl", "__kcrctab_unused_gpl", KMODNS_EXPORT_UNUSED_SYMBOL_GPL },
};
#define N_TABLES ARRAY_SIZE(tables)

struct vsection {
	bool present;
	GElf_Shdr shdr;
	const unsigned char *bytes; /* sh_size bytes inside the image */
};

/* How an entry of __ksymtab* is laid out: fields of 4 bytes relative to themselves, or pointers. */
struct layout {
	bool prel32;
	unsigned fields; /* 3 with a namespace (5.4+), 2 before */
};

struct vmlinux_reader {
	struct kmodns_ctx *ctx;
	const char *label;
	Elf *elf;
	const char *image;
	size_t image_size;
	size_t ptr_size;
	struct vsection strings, kflagstab;
	struct vsection ksymtab[N_TABLES], kcrctab[N_TABLES];
};

static int corrupt(struct vmlinux_reader *rd, const char *what)
{
	ERR(rd->ctx, "%s: corrupt kernel image: %s", rd->label, what);
	return -EBADMSG;
}

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The fields of a section as host integers, through libelf's conversion from the file's byte order. */
static int section_words(struct vmlinux_reader *rd, const struct vsection *sec, Elf_Type type,
			 size_t word, void **out)
{
	_cleanup_free_ void *buf = malloc(sec->shdr.sh_size ? sec->shdr.sh_size : 1);
	Elf_Data src = { .d_buf = (void *)sec->bytes, .d_type = type, .d_size = sec->shdr.sh_size,
			 .d_version = EV_CURRENT };
	Elf_Data dst = { .d_buf = buf, .d_type = type, .d_size = sec->shdr.sh_size,
			 .d_version = EV_CURRENT };
	GElf_Ehdr ehdr;

	if (buf == NULL)
		return -ENOMEM;
	if (sec->shdr.sh_size % word != 0)
		return corrupt(rd, "export table size is not a whole number of fields");
	if (sym_gelf_getehdr(rd->elf, &ehdr) == NULL ||
	    sym_gelf_xlatetom(rd->elf, &dst, &src, ehdr.e_ident[EI_DATA]) == NULL) {
		ERR(rd->ctx, "%s: corrupt kernel image: %s", rd->label, sym_elf_errmsg(-1));
		return -EBADMSG;
	}
	*out = TAKE_PTR(buf);
	return 0;
}

/* The string at a run-time address, if it lies in __ksymtab_strings; NULL otherwise. */
static const char *string_at(const struct vmlinux_reader *rd, uint64_t addr)
{
	const GElf_Shdr *sh = &rd->strings.shdr;
	const char *s;
	uint64_t off;

	if (addr < sh->sh_addr || addr - sh->sh_addr >= sh->sh_size)
		return NULL;
	off = addr - sh->sh_addr;
	s = (const char *)rd->strings.bytes + off;
	return memchr(s, '\0', sh->sh_size - off) ? s : NULL;
}

/* Field f of entry i as an address: PREL32 adds the field's own address. */
static uint64_t field_target(const struct vsection *tab, const struct layout *lo, const void *words,
			     size_t ptr_size, size_t i, unsigned f, bool *is_null)
{
	size_t k = i * lo->fields + f;

	if (lo->prel32) {
		int32_t off = ((const int32_t *)words)[k];
		*is_null = off == 0;
		return tab->shdr.sh_addr + (uint64_t)k * 4 + (uint64_t)(int64_t)off;
	}
	if (ptr_size == 8) {
		uint64_t p = ((const uint64_t *)words)[k];
		*is_null = p == 0;
		return p;
	}
	*is_null = ((const uint32_t *)words)[k] == 0;
	return ((const uint32_t *)words)[k];
}

/* Does every entry's name (and namespace, if any) land on a string of __ksymtab_strings? */
static bool layout_fits(const struct vmlinux_reader *rd, const struct vsection *tab,
			const struct layout *lo, const void *words, size_t count)
{
	size_t i;

	for (i = 0; i < count; i++) {
		bool null;
		const char *name = string_at(rd, field_target(tab, lo, words, rd->ptr_size, i, 1, &null));
		if (null || name == NULL || name[0] == '\0')
			return false;
		if (lo->fields == 3 &&
		    string_at(rd, field_target(tab, lo, words, rd->ptr_size, i, 2, &null)) == NULL && !null)
			return false;
	}
	return true;
}

/* The number of entries a parallel table promises for table t, or 0 if none does. */
static size_t promised_count(const struct vmlinux_reader *rd, size_t t)
{
	if (rd->kcrctab[t].present)
		return rd->kcrctab[t].shdr.sh_size / 4;
	if (t == 0 && rd->kflagstab.present)
		return rd->kflagstab.shdr.sh_size;
	return 0;
}

static int read_table(struct vmlinux_reader *rd, size_t t, struct kmodns_symvers *sv)
{
	static const struct layout layouts[] = {
		{ .prel32 = true, .fields = 3 },
		{ .prel32 = false, .fields = 3 },
		{ .prel32 = true, .fields = 2 },
		{ .prel32 = false, .fields = 2 },
	};
	const struct vsection *tab = &rd->ksymtab[t];
	_cleanup_free_ void *prel = NULL, *ptrs = NULL, *crcs = NULL;
	const struct layout *lo = NULL;
	const void *words = NULL;
	size_t count = 0, promised = promised_count(rd, t), i;
	int r;

	if (tab->shdr.sh_size == 0)
		return 0;
	if (tab->shdr.sh_size % 4 == 0 && (r = section_words(rd, tab, ELF_T_SWORD, 4, &prel)) < 0)
		return r;
	if (tab->shdr.sh_size % rd->ptr_size == 0 &&
	    (r = section_words(rd, tab, ELF_T_ADDR, rd->ptr_size, &ptrs)) < 0)
		return r;
	/* The layout is derived from the bytes: the one whose names all land in __ksymtab_strings. */
	for (i = 0; i < ARRAY_SIZE(layouts) && lo == NULL; i++) {
		size_t entry = layouts[i].fields * (layouts[i].prel32 ? 4 : rd->ptr_size);
		const void *w = layouts[i].prel32 ? prel : ptrs;
		if (w == NULL || tab->shdr.sh_size % entry != 0)
			continue;
		count = tab->shdr.sh_size / entry;
		if ((promised == 0 || promised == count) && layout_fits(rd, tab, &layouts[i], w, count))
			lo = &layouts[i], words = w;
	}
	if (lo == NULL) {
		if (promised != 0)
			ERR(rd->ctx, "%s: corrupt kernel image: %s does not hold the %zu entries its %s promises",
			    rd->label, tables[t].ksymtab, promised,
			    rd->kcrctab[t].present ? tables[t].kcrctab : "__kflagstab");
		else
			ERR(rd->ctx, "%s: corrupt kernel image: %s entries have no known layout",
			    rd->label, tables[t].ksymtab);
		return -EBADMSG;
	}
	/* With both parallel tables, the one the layout did not come from must agree too. */
	if (t == 0 && rd->kflagstab.present && rd->kflagstab.shdr.sh_size != count)
		return corrupt(rd, "__kflagstab and __ksymtab disagree on the number of exports");
	if (rd->kcrctab[t].present &&
	    (r = section_words(rd, &rd->kcrctab[t], ELF_T_WORD, 4, &crcs)) < 0)
		return r;
	/* an empty __kcrctab promised nothing above, yet one CRC is read per export */
	if (rd->kcrctab[t].present && rd->kcrctab[t].shdr.sh_size / 4 != count)
		return corrupt(rd, "__kcrctab and __ksymtab disagree on the number of exports");
	for (i = 0; i < count; i++) {
		enum kmodns_export_type type = tables[t].type;
		bool null;
		const char *name = string_at(rd, field_target(tab, lo, words, rd->ptr_size, i, 1, &null));
		const char *ns = lo->fields == 3 ?
			string_at(rd, field_target(tab, lo, words, rd->ptr_size, i, 2, &null)) : NULL;

		if (ns == NULL)
			ns = "";
		/* 7.1+: one __ksymtab for all, bit 0 of the entry's flag byte = GPL-only. */
		if (t == 0 && rd->kflagstab.present && (rd->kflagstab.bytes[i] & 1))
			type = KMODNS_EXPORT_SYMBOL_GPL;
		r = kmodns_symvers_add(sv, name, "vmlinux", ns, type, crcs != NULL,
				       crcs ? ((const uint32_t *)crcs)[i] : 0);
		if (r < 0)
			return r;
	}
	return 0;
}

static int find_sections(struct vmlinux_reader *rd)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (sym_elf_getshdrstrndx(rd->elf, &shstrndx) < 0) {
		ERR(rd->ctx, "%s: corrupt kernel image: section names: %s", rd->label, sym_elf_errmsg(-1));
		return -EBADMSG;
	}
	while ((scn = sym_elf_nextscn(rd->elf, scn)) != NULL) {
		struct vsection sec = { .present = true };
		const char *name;
		size_t t;

		if (sym_gelf_getshdr(scn, &sec.shdr) == NULL ||
		    (name = sym_elf_strptr(rd->elf, shstrndx, sec.shdr.sh_name)) == NULL) {
			ERR(rd->ctx, "%s: corrupt kernel image: section header: %s", rd->label,
			    sym_elf_errmsg(-1));
			return -EBADMSG;
		}
		if (!startswith(name, "__k"))
			continue;
		/* A truncated file loses its tables here before anything else notices. */
		if (sec.shdr.sh_type == SHT_NOBITS || sec.shdr.sh_offset > rd->image_size ||
		    rd->image_size - sec.shdr.sh_offset < sec.shdr.sh_size)
			return corrupt(rd, "an export section lies outside the file");
		sec.bytes = (const unsigned char *)rd->image + sec.shdr.sh_offset;
		if (streq(name, "__ksymtab_strings"))
			rd->strings = sec;
		else if (streq(name, "__kflagstab"))
			rd->kflagstab = sec;
		for (t = 0; t < N_TABLES; t++) {
			if (streq(name, tables[t].ksymtab))
				rd->ksymtab[t] = sec;
			else if (streq(name, tables[t].kcrctab))
				rd->kcrctab[t] = sec;
		}
	}
	return 0;
}

static int read_vmlinux(struct vmlinux_reader *rd, struct kmodns_symvers *sv)
{
	const unsigned char *id = (const unsigned char *)rd->image;
	size_t t, shnum;
	bool any = false;
	GElf_Ehdr ehdr;
	int r;

	if (rd->image_size < EI_NIDENT || memcmp(id, ELFMAG, SELFMAG) != 0 ||
	    (id[EI_CLASS] != ELFCLASS32 && id[EI_CLASS] != ELFCLASS64) ||
	    (id[EI_DATA] != ELFDATA2LSB && id[EI_DATA] != ELFDATA2MSB))
		return corrupt(rd, "the vmlinux inside is not an ELF file");
	rd->elf = sym_elf_memory((char *)rd->image, rd->image_size);
	if (rd->elf == NULL || sym_elf_kind(rd->elf) != ELF_K_ELF || sym_gelf_getehdr(rd->elf, &ehdr) == NULL) {
		ERR(rd->ctx, "%s: corrupt kernel image: ELF header: %s", rd->label, sym_elf_errmsg(-1));
		return -EBADMSG;
	}
	if (ehdr.e_type != ET_EXEC && ehdr.e_type != ET_DYN) {
		ERR(rd->ctx, "%s: not a kernel image (ELF type %u, not an executable)", rd->label,
		    ehdr.e_type);
		return -ENOEXEC;
	}
	/* libelf takes a section header table cut short as a smaller one: compare with the header. */
	if (sym_elf_getshdrnum(rd->elf, &shnum) < 0 || ehdr.e_shentsize == 0 || ehdr.e_shoff > rd->image_size ||
	    (rd->image_size - ehdr.e_shoff) / ehdr.e_shentsize < shnum || shnum == 0)
		return corrupt(rd, "section header table missing or past the end of the file");
	rd->ptr_size = sym_gelf_getclass(rd->elf) == ELFCLASS64 ? 8 : 4;

	r = find_sections(rd);
	if (r < 0)
		return r;
	for (t = 0; t < N_TABLES; t++)
		any |= rd->ksymtab[t].present;
	if (!any || !rd->strings.present) {
		ERR(rd->ctx, "%s: no exports in this kernel image (no __ksymtab and __ksymtab_strings)",
		    rd->label);
		return -ENODATA;
	}
	for (t = 0; t < N_TABLES && r >= 0; t++)
		if (rd->ksymtab[t].present)
			r = read_table(rd, t, sv);
	return r;
}

/* The compressed vmlinux inside a bzImage, decompressed. */
static int bzimage_payload(struct kmodns_ctx *ctx, const char *label, const unsigned char *data,
			   size_t size, struct kmodns_image *vmlinux)
{
	size_t setup_sects, start, offset, length;
	uint32_t expected;
	int r;

	if (size < BZ_HEADER_END || memcmp(data + BZ_HEADER_MAGIC, "HdrS", 4) != 0) {
		ERR(ctx, "%s: not a kernel image (neither an x86 bzImage nor a vmlinux ELF)", label);
		return -ENOEXEC;
	}
	if ((data[BZ_VERSION] | data[BZ_VERSION + 1] << 8) < BZ_PAYLOAD_VERSION) {
		ERR(ctx, "%s: bzImage boot protocol too old to locate the kernel payload", label);
		return -ENOTSUP;
	}
	setup_sects = data[BZ_SETUP_SECTS] ? data[BZ_SETUP_SECTS] : 4;
	start = (setup_sects + 1) * 512;
	offset = le32(data + BZ_PAYLOAD_OFFSET);
	length = le32(data + BZ_PAYLOAD_LENGTH);
	if (start > size || offset > size - start || length > size - start - offset) {
		ERR(ctx, "%s: truncated kernel image: the payload ends past the end of the file", label);
		return -EBADMSG;
	}
	/* The build appends the decompressed size (LE32) to the compressed stream. */
	if (length <= 4) {
		ERR(ctx, "%s: corrupt kernel image: empty payload", label);
		return -EBADMSG;
	}
	expected = le32(data + start + offset + length - 4);
	r = kmodns_payload_decompress(ctx, label, data + start + offset, length - 4, expected, vmlinux);
	if (r < 0)
		return r;
	if (vmlinux->size != expected) {
		ERR(ctx, "%s: corrupt kernel image: payload decompressed to %zu bytes, the image says %" PRIu32,
		    label, vmlinux->size, expected);
		free(vmlinux->data);
		vmlinux->data = NULL;
		return -EBADMSG;
	}
	return 0;
}

KMODNS_EXPORT int kmodns_symvers_new_from_vmlinuz(struct kmodns_ctx *ctx, const char *path,
						  struct kmodns_symvers **out)
{
	_cleanup_free_ char *raw = NULL;
	struct kmodns_image vmlinux = { 0 };
	struct vmlinux_reader rd = { .ctx = ctx, .label = path };
	struct kmodns_symvers *sv;
	size_t size;
	int r;

	*out = NULL;
	r = read_file(path, &raw, &size);
	if (r < 0) {
		ERR(ctx, "%s: %s", path, strerror(-r));
		return r;
	}
	if (size == 0) {
		ERR(ctx, "%s: empty file", path);
		return -ENOEXEC;
	}
	if (size >= SELFMAG && memcmp(raw, ELFMAG, SELFMAG) == 0) {
		vmlinux.data = TAKE_PTR(raw);
		vmlinux.size = size;
	} else {
		r = bzimage_payload(ctx, path, (const unsigned char *)raw, size, &vmlinux);
		if (r < 0)
			return r;
		free(TAKE_PTR(raw));
	}
	rd.image = vmlinux.data;
	rd.image_size = vmlinux.size;
	r = kmodns_dl_need(ctx, path, KMODNS_DL_LIBELF);
	if (r < 0) {
		free(vmlinux.data);
		return r;
	}
	sym_elf_version(EV_CURRENT);
	sv = kmodns_symvers_new_empty(ctx);
	r = sv == NULL ? -ENOMEM : read_vmlinux(&rd, sv);
	if (rd.elf != NULL)
		sym_elf_end(rd.elf);
	free(vmlinux.data);
	if (r < 0) {
		kmodns_symvers_unref(sv);
		return r;
	}
	*out = sv;
	return 0;
}
