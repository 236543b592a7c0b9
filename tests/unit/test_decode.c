/*
 * Unit tests of the pure MSR and CPUID field decoders and encoders.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "decode.h"
#include "msr.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

struct therm_case {
	const char *name;
	uint64_t raw;
	struct decode_therm_status want;
};

static void assert_therm_equal(const char *name, struct decode_therm_status got,
			       struct decode_therm_status want)
{
	print_message("case %s\n", name);
	assert_int_equal(got.thermal, want.thermal);
	assert_int_equal(got.thermal_log, want.thermal_log);
	assert_int_equal(got.prochot, want.prochot);
	assert_int_equal(got.prochot_log, want.prochot_log);
	assert_int_equal(got.critical, want.critical);
	assert_int_equal(got.power_limit, want.power_limit);
	assert_int_equal(got.readout, want.readout);
	assert_int_equal(got.resolution_c, want.resolution_c);
	assert_int_equal(got.reading_valid, want.reading_valid);
}

static void therm_status_fields(void **state)
{
	static const struct therm_case cases[] = {
		{ "all clear", 0, { 0 } },
		{ "valid, readout 0 (at TjMax)", UINT64_C(0x80000000),
		  { .reading_valid = true } },
		{ "valid, readout 127, resolution 1", UINT64_C(0x887f0000),
		  { .readout = 127, .resolution_c = 1, .reading_valid = true } },
		{ "valid bit clear keeps the readout", UINT64_C(0x00280000),
		  { .readout = 40 } },
		{ "resolution 15", UINT64_C(0xf8000000),
		  { .resolution_c = 15, .reading_valid = true } },
		{ "thermal and its log", 0x3, { .thermal = true, .thermal_log = true } },
		{ "prochot and its log", 0xc, { .prochot = true, .prochot_log = true } },
		{ "critical", 0x10, { .critical = true } },
		{ "power limit", 0x400, { .power_limit = true } },
		{ "undecoded logs and reserved bits ignored",
		  UINT64_C(0xffffffff07800820) | (UINT64_C(5) << 16), { .readout = 5 } },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		assert_therm_equal(cases[i].name, decode_therm_status(cases[i].raw), cases[i].want);
}

static void package_therm_status_fields(void **state)
{
	static const struct therm_case cases[] = {
		{ "all clear is still valid", 0, { .reading_valid = true } },
		{ "readout 127", UINT64_C(0x7f0000), { .readout = 127, .reading_valid = true } },
		{ "core-only fields ignored", UINT64_C(0xf8000000) | (UINT64_C(30) << 16),
		  { .readout = 30, .reading_valid = true } },
		{ "hfi bit 26 ignored, flags decoded", MSR_BIT(26) | 0x41f,
		  { .thermal = true, .thermal_log = true, .prochot = true, .prochot_log = true,
		    .critical = true, .power_limit = true, .reading_valid = true } },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		assert_therm_equal(cases[i].name, decode_package_therm_status(cases[i].raw),
				   cases[i].want);
}

static void tjmax_field(void **state)
{
	static const struct {
		uint64_t raw;
		unsigned want;
	} cases[] = {
		{ 0, 0 },
		{ UINT64_C(0x00640000), 100 },
		{ UINT64_C(0x0f5affff), 90 },     /* TCC offset 15 and low bits are not TjMax */
		{ UINT64_C(0xffffffff00ff0000), 255 },
		{ UINT64_C(0x00690a00), 105 },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		assert_int_equal(decode_tjmax(cases[i].raw), cases[i].want);
}

static void rapl_time_unit(void **state)
{
	(void)state;
	/* A typical server value: PU 3, ESU 14, TU 10 -> 1/1024 s. */
	assert_true(decode_rapl_time_unit_s(0xa0e03) == 1.0 / 1024);
	assert_true(decode_rapl_time_unit_s(0) == 1.0 / 1024);   /* TU 0 read as 0xA, as turbostat */
	assert_true(decode_rapl_time_unit_s(0xf0000) == 1.0 / 32768);
	assert_true(decode_rapl_time_unit_s(UINT64_C(0xfffffffffff0ffff)) == 1.0 / 1024);
	assert_true(decode_rapl_time_unit_s(0x10000) == 0.5);
}

static void fixed_ctrl_nibbles(void **state)
{
	/* Nibbles 3, 0xa, 5 for counters 0..2, and a bit far above them. */
	const uint64_t base = UINT64_C(0x0000100000000000) | 0x5a3;
	const unsigned want[] = { 0x3, 0xa, 0x5 };

	(void)state;
	for (unsigned i = 0; i < 3; i++) {
		uint64_t v = encode_fixed_ctrl_nibble(base, i, 0xb);

		print_message("counter %u\n", i);
		assert_int_equal(decode_fixed_ctrl_nibble(base, i), want[i]);
		assert_int_equal(decode_fixed_ctrl_nibble(v, i), 0xb);
		for (unsigned j = 0; j < 3; j++)
			if (j != i)
				assert_int_equal(decode_fixed_ctrl_nibble(v, j), want[j]);
		assert_true(v & UINT64_C(0x0000100000000000));
		assert_int_equal(encode_fixed_ctrl_nibble(v, i, want[i]), base);
		assert_int_equal(encode_fixed_ctrl_nibble(0, i, 0), 0);
	}
	assert_int_equal(encode_fixed_ctrl_nibble(0, 1, FIXED_CTR_CTRL_EN_OS | FIXED_CTR_CTRL_EN_USR),
			 0x30);
	/* Only 4 bits of the nibble argument are used. */
	assert_int_equal(encode_fixed_ctrl_nibble(0, 0, 0x1f), 0xf);
	/* Out-of-range counters leave the value alone. */
	assert_int_equal(encode_fixed_ctrl_nibble(base, 16, 0xf), base);
	assert_int_equal(decode_fixed_ctrl_nibble(UINT64_MAX, 16), 0);
	assert_int_equal(decode_fixed_ctrl_nibble(UINT64_MAX, 15), 0xf);
}

static void cpuid_vendor(void **state)
{
	static const struct {
		struct hw_cpuid regs;
		const char *want;
	} cases[] = {
		{ { 0xd, 0x756e6547, 0x6c65746e, 0x49656e69 }, "GenuineIntel" },
		{ { 0x10, 0x68747541, 0x444d4163, 0x69746e65 }, "AuthenticAMD" },
		{ { 0, 0, 0, 0 }, "" },
	};
	char vendor[13];

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		decode_cpuid_vendor(&cases[i].regs, vendor);
		assert_string_equal(vendor, cases[i].want);
	}
}

static void cpuid_signature(void **state)
{
	static const struct {
		const char *name;
		uint32_t eax;
		unsigned family, model, stepping;
	} cases[] = {
		{ "westmere-ep (extended model)", 0x206c2, 6, 0x2c, 2 },
		{ "skylake-sp (extended model)", 0x50654, 6, 0x55, 4 },
		{ "nehalem-ep", 0x106a5, 6, 0x1a, 5 },
		{ "emerald rapids", 0xc06f2, 6, 0xcf, 2 },
		{ "amd zen2 (extended family)", 0x830f10, 0x17, 0x31, 0 },
		{ "family 5 ignores extended model", 0x10543, 5, 0x4, 3 },
		{ "reserved bits ignored", 0xf00306c3, 6, 0x3c, 3 },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct decode_cpuid_signature s = decode_cpuid_signature(cases[i].eax);

		print_message("case %s\n", cases[i].name);
		assert_int_equal(s.family, cases[i].family);
		assert_int_equal(s.model, cases[i].model);
		assert_int_equal(s.stepping, cases[i].stepping);
	}
}

static void cpuid_perfmon(void **state)
{
	static const struct {
		const char *name;
		struct hw_cpuid regs;
		struct decode_cpuid_perfmon want;
	} cases[] = {
		{ "westmere v3", { 0x07300403, 0, 0, 0x603 },
		  { 3, 4, 48, 7, 0, 3, 48 } },
		{ "ebx masked to its length", { 0x07300403, 0xffffff44, 0, 0x603 },
		  { 3, 4, 48, 7, 0x44, 3, 48 } },
		{ "anythread-deprecated bit is not width", { 0x08300804, 0, 0, 0x8603 },
		  { 4, 8, 48, 8, 0, 3, 48 } },
		{ "v1 has no fixed counters", { 0x07280201, 0x1, 0, 0x603 },
		  { 1, 2, 40, 7, 0x1, 0, 0 } },
		{ "length 32 keeps all of ebx", { 0x20300405, 0x80000001, 0, 0x1fff },
		  { 5, 4, 48, 32, 0x80000001, 31, 255 } },
		{ "no perfmon", { 0, 0xffffffff, 0, 0xffffffff }, { 0 } },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct decode_cpuid_perfmon p = decode_cpuid_perfmon(&cases[i].regs);
		const struct decode_cpuid_perfmon *w = &cases[i].want;

		print_message("case %s\n", cases[i].name);
		assert_int_equal(p.version, w->version);
		assert_int_equal(p.n_gp, w->n_gp);
		assert_int_equal(p.gp_width_bits, w->gp_width_bits);
		assert_int_equal(p.ebx_length, w->ebx_length);
		assert_int_equal(p.unavailable, w->unavailable);
		assert_int_equal(p.n_fixed, w->n_fixed);
		assert_int_equal(p.fixed_width_bits, w->fixed_width_bits);
	}
}

static void cpuid_thermal(void **state)
{
	static const struct {
		uint32_t eax;
		bool dts, ptm;
	} cases[] = {
		{ 0, false, false },
		{ 0x1, true, false },
		{ 0x40, false, true },
		{ 0x77, true, true },
		{ 0xffffffbe, false, false },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct decode_cpuid_thermal t = decode_cpuid_thermal(cases[i].eax);

		assert_int_equal(t.dts, cases[i].dts);
		assert_int_equal(t.ptm, cases[i].ptm);
	}
}

static void cpuid_topology(void **state)
{
	static const struct {
		struct hw_cpuid regs;
		struct decode_cpuid_topology want;
	} cases[] = {
		{ { 1, 2, 0x100, 5 }, { 1, 2, 1, 5 } },           /* SMT level */
		{ { 5, 24, 0x201, 0x21 }, { 5, 24, 2, 0x21 } },   /* core level */
		{ { 0, 0, 0x2, 0x21 }, { 0, 0, 0, 0x21 } },       /* invalid level */
		{ { 0xffffffe4, 0xffff0010, 0xffff02ff, 0xffffffff },
		  { 4, 16, 2, 0xffffffff } },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct decode_cpuid_topology t = decode_cpuid_topology(&cases[i].regs);

		assert_int_equal(t.shift, cases[i].want.shift);
		assert_int_equal(t.n_logical, cases[i].want.n_logical);
		assert_int_equal(t.level_type, cases[i].want.level_type);
		assert_int_equal(t.x2apic_id, cases[i].want.x2apic_id);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(therm_status_fields),
		cmocka_unit_test(package_therm_status_fields),
		cmocka_unit_test(tjmax_field),
		cmocka_unit_test(rapl_time_unit),
		cmocka_unit_test(fixed_ctrl_nibbles),
		cmocka_unit_test(cpuid_vendor),
		cmocka_unit_test(cpuid_signature),
		cmocka_unit_test(cpuid_perfmon),
		cmocka_unit_test(cpuid_thermal),
		cmocka_unit_test(cpuid_topology),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
