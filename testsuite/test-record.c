// SPDX-License-Identifier: LGPL-2.1-or-later
/* The namespace record's text: verdicts on imports, the unresolved count, older and newer records, bad ones. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "libkmodns.h"

static int failures;

static void check(const char *name, int ok)
{
	printf("%s: %s\n", ok ? "PASS" : "FAIL", name);
	failures += !ok;
}

static int parse(const char *text, struct kmodns_ns_record **rec)
{
	return kmodns_ns_record_new_from_text(text, rec);
}

static void expect_bad(const char *name, const char *text)
{
	/* stale on entry: a failed parse must clear it */
	struct kmodns_ns_record *rec = (struct kmodns_ns_record *)&failures;
	int r = parse(text, &rec);

	check(name, r == -EBADMSG && rec == NULL);
	kmodns_ns_record_unref(rec);
}

int main(void)
{
	struct kmodns_ns_record *rec;
	int r;

	r = parse("kmodns-ns/1 vmlinux=known unresolved=3 import=NSI_CORE "
		  "import=module:a%2Cb*,module-import import=X,imported export=E%20F "
		  "require=NSI_CORE,nsi_core,nsi_core_fn,imported "
		  "require=module:a%2Cb*,nsi_core,f,pattern require=M,vmlinux,g,missing unused=X", &rec);
	check("parses", r == 0 && rec != NULL);
	if (rec != NULL) {
		check("vmlinux-known", kmodns_ns_record_vmlinux_known(rec));
		check("unresolved", kmodns_ns_record_get_unresolved_count(rec) == 3);
		check("imports", kmodns_ns_record_get_import_count(rec) == 3);
		check("import-decoded", strcmp(kmodns_ns_record_get_import(rec, 1), "module:a,b*") == 0);
		check("import-allowed", kmodns_ns_record_get_import_verdict(rec, 0) == KMODNS_ALLOWED_IMPORTED);
		check("import-refused",
		      kmodns_ns_record_get_import_verdict(rec, 1) == KMODNS_REFUSED_MODULE_IMPORT);
		check("import-explicitly-allowed",
		      kmodns_ns_record_get_import_verdict(rec, 2) == KMODNS_ALLOWED_IMPORTED &&
			      strcmp(kmodns_ns_record_get_import(rec, 2), "X") == 0);
		check("import-out-of-range",
		      kmodns_ns_record_get_import_verdict(rec, 3) == KMODNS_ALLOWED_IMPORTED &&
			      kmodns_ns_record_get_import(rec, 3) == NULL);
		check("export-decoded", kmodns_ns_record_get_export_count(rec) == 1 &&
					      strcmp(kmodns_ns_record_get_export(rec, 0), "E F") == 0);
		check("requires", kmodns_ns_record_get_require_count(rec) == 3);
		check("require-pattern",
		      kmodns_ns_record_get_require_verdict(rec, 1) == KMODNS_ALLOWED_MODULE_PATTERN &&
			      strcmp(kmodns_ns_record_get_require_namespace(rec, 1), "module:a,b*") == 0);
		check("require-missing",
		      kmodns_ns_record_get_require_verdict(rec, 2) == KMODNS_REFUSED_MISSING_IMPORT &&
			      strcmp(kmodns_ns_record_get_require_exporter(rec, 2), "vmlinux") == 0 &&
			      strcmp(kmodns_ns_record_get_require_symbol(rec, 2), "g") == 0);
		check("unused", kmodns_ns_record_get_unused_count(rec) == 1 &&
				      strcmp(kmodns_ns_record_get_unused(rec, 0), "X") == 0);
		kmodns_ns_record_unref(rec);
	}

	/* A record from before imports had verdicts and the count existed; a field of a later format. */
	r = parse("kmodns-ns/1 vmlinux=unknown import=PWM future=1,2 require=PWM,pwm,f,imported", &rec);
	check("older-record-parses", r == 0 && rec != NULL);
	if (rec != NULL) {
		check("older-vmlinux-unknown", !kmodns_ns_record_vmlinux_known(rec));
		check("older-import-allowed",
		      kmodns_ns_record_get_import_verdict(rec, 0) == KMODNS_ALLOWED_IMPORTED);
		check("older-unresolved-0", kmodns_ns_record_get_unresolved_count(rec) == 0);
		check("unknown-field-skipped", kmodns_ns_record_get_require_count(rec) == 1);
		kmodns_ns_record_unref(rec);
	}
	r = parse("kmodns-ns/1 vmlinux=known", &rec);
	check("empty-record", r == 0 && kmodns_ns_record_get_import_count(rec) == 0 &&
				      kmodns_ns_record_get_require_count(rec) == 0);
	kmodns_ns_record_unref(rec);

	/* What a policy may ask of the module: absent from older records, then unknown (-1). */
	r = parse("kmodns-ns/1 vmlinux=known traits=intree,signed", &rec);
	check("traits-both", r == 0 && kmodns_ns_record_get_traits(rec) == (KMODNS_TRAIT_INTREE | KMODNS_TRAIT_SIGNED));
	kmodns_ns_record_unref(rec);
	r = parse("kmodns-ns/1 vmlinux=known traits=signed,future", &rec);
	check("traits-unknown-one-skipped", r == 0 && kmodns_ns_record_get_traits(rec) == KMODNS_TRAIT_SIGNED);
	kmodns_ns_record_unref(rec);
	r = parse("kmodns-ns/1 vmlinux=known traits=-", &rec);
	check("traits-none", r == 0 && kmodns_ns_record_get_traits(rec) == 0);
	kmodns_ns_record_unref(rec);
	r = parse("kmodns-ns/1 vmlinux=known", &rec);
	check("traits-absent-unknown", r == 0 && kmodns_ns_record_get_traits(rec) == -1);
	kmodns_ns_record_unref(rec);
	expect_bad("traits-trailing-comma", "kmodns-ns/1 vmlinux=known traits=intree,");
	expect_bad("traits-empty-item", "kmodns-ns/1 vmlinux=known traits=,signed");

	expect_bad("not-a-record", "pwm: kernel/drivers/pwm.ko");
	expect_bad("other-version", "kmodns-ns/2 vmlinux=known");
	expect_bad("import-symbol-verdict", "kmodns-ns/1 vmlinux=known import=X,missing");
	expect_bad("import-unknown-verdict", "kmodns-ns/1 vmlinux=known import=X,refused");
	expect_bad("import-empty-verdict", "kmodns-ns/1 vmlinux=known import=X,");
	expect_bad("unresolved-not-a-number", "kmodns-ns/1 vmlinux=known unresolved=1x");
	expect_bad("unresolved-empty", "kmodns-ns/1 vmlinux=known unresolved=");
	expect_bad("unresolved-huge", "kmodns-ns/1 vmlinux=known unresolved=12345678901234567890");
	expect_bad("require-three-parts", "kmodns-ns/1 vmlinux=known require=A,b,c");
	expect_bad("bad-escape", "kmodns-ns/1 vmlinux=known import=A%2");
	expect_bad("nul-escape", "kmodns-ns/1 vmlinux=known import=A%00");
	expect_bad("field-without-value", "kmodns-ns/1 vmlinux=known import");
	expect_bad("trailing-space", "kmodns-ns/1 vmlinux=known ");
	return failures ? 1 : 0;
}
