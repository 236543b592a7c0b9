/*
 * The ledger's state file: the records the register ledger journals before each
 * write, the start-up recovery that undoes a killed daemon's leftovers on a
 * simulated machine (its own registers restored, another agent's left
 * alone), and the refusals: a foreign file, another backend, a held lock.
 * Then the damage a hostile or unlucky environment does: a full disk, a
 * kill in the middle of a rewrite, a corrupt header, garbled records, and
 * forged files (owner, mode, type, registers uncored never programs).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "helpers.h"
#include "ledger.h"
#include "msr.h"
#include "recovery.h"
#include "sim.h"
#include "state_file.h"

struct fixture {
	char dir[4096], path[4200];
	struct sim *sim;
	struct hw hw;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	char err[256];

	helpers_mkdtemp(f->dir, sizeof(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/ledger", f->dir);
	/* The journal's own tests: registers from their power-on values. */
	f->sim = sim_open_boot("westmere-ep-2s", NULL, SIM_CLOCK_STEPPED, SIM_BOOT_RESET,
			       err, sizeof(err));
	assert_non_null(f->sim);
	sim_bind(f->sim, &f->hw);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	hw_close(&f->hw);
	helpers_rmtree(f->dir);
	free(f);
	return 0;
}

static char *slurp(const char *path)
{
	static char buf[8192];
	FILE *fp = fopen(path, "r");
	size_t n;

	assert_non_null(fp);
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	buf[n] = '\0';
	fclose(fp);
	return buf;
}

/* CRC-32 (IEEE), written here again so the test checks the file format, not the code. */
static unsigned long crc(const char *p)
{
	unsigned long c = 0xffffffffUL;

	for (; *p; p++) {
		c ^= (unsigned char)*p;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0xedb88320UL : c >> 1;
	}
	return ~c & 0xffffffffUL;
}

/* The lines given, each sealed with " *CRC" and a newline; NULL ends the list. */
static const char *sealed(const char *first, ...)
{
	static char buf[4][4096];
	static int which;
	char *out = buf[which++ % 4];
	size_t len = 0;
	va_list ap;

	out[0] = '\0';
	va_start(ap, first);
	for (const char *line = first; line; line = va_arg(ap, const char *))
		len += (size_t)snprintf(out + len, 4096 - len, "%s *%08lx\n", line, crc(line));
	va_end(ap);
	return out;
}

static uint64_t reg(struct fixture *f, int cpu, uint32_t msr)
{
	uint64_t v;

	assert_int_equal(hw_read_msr(&f->hw, cpu, msr, &v), 0);
	return v;
}

static void journals_each_change_before_the_write(void **state)
{
	struct fixture *f = *state;
	struct ledger_recovery rec;
	struct state_file *lf;
	struct ledger *l;
	char err[256] = "";

	assert_int_equal(recovery_open(f->path, "/", &f->hw, &lf, &rec, err, sizeof(err)), 0);
	assert_false(rec.found);
	ledger_set_journal(lf);
	l = ledger_new();
	assert_int_equal(ledger_remember(l, &f->hw, 0, 0x3b0), 0);
	assert_int_equal(ledger_write(l, &f->hw, 0, 0x3c0, 0x420167), 0);
	assert_int_equal(ledger_write(l, &f->hw, 0, 0x3c0, 0x420167), 0);   /* unchanged: no record */
	assert_int_equal(ledger_set_bits(l, &f->hw, 0, 0x391, 0x3), 0);
	assert_int_equal(ledger_forget_bits(l, 0, 0x391, 0x2), 0);
	assert_int_equal(crc("123456789"), 0xcbf43926UL);
	assert_string_equal(slurp(f->path), sealed("uncored-ledger 2 /", "state 0",
						    "own 0 0x3b0 0x0 -",
						    "own 0 0x3c0 0x0 0x420167",
						    "bits 0 0x391 0x3",
						    "bits 0 0x391 0x1", NULL));
	assert_int_equal(ledger_restore(l, &f->hw, NULL), 0);
	/* After a restore the journal holds the live state: nothing. */
	assert_string_equal(slurp(f->path), sealed("uncored-ledger 2 /", "state 0", NULL));
	ledger_free(l);
	ledger_set_journal(NULL);
	assert_int_equal(state_file_error(lf), 0);
	state_file_close(lf);
	assert_int_equal(access(f->path, F_OK), -1);
}

/*
 * A killed daemon's journal: on cpu 0 (socket 0) everything is still as it
 * left it; on cpu 6 (socket 1) another agent has since reprogrammed the
 * event select, so that socket's enable bits and counters are left alone.
 */
static void recovery_restores_ours_and_leaves_theirs(void **state)
{
	struct fixture *f = *state;
	struct ledger_recovery rec;
	struct state_file *lf;
	char err[256] = "";

	assert_int_equal(sim_poke(f->sim, 0, 0x3c0, 0x420167), 0);
	assert_int_equal(sim_poke(f->sim, 0, 0x391, 0x81), 0);
	assert_int_equal(sim_poke(f->sim, 0, 0x3b0, 0x999), 0);
	assert_int_equal(sim_poke(f->sim, 6, 0x3c0, 0x400160), 0);
	assert_int_equal(sim_poke(f->sim, 6, 0x391, 0x1), 0);
	assert_int_equal(sim_poke(f->sim, 6, 0x3b0, 0x888), 0);
	char text[4096], aside[4300];

	snprintf(text, sizeof(text), "%s%s",
		 sealed("uncored-ledger 2 /",
			"own 0 0x3b0 0x5 -",
			"own 0 0x3c0 0x0 0x420167",
			"bits 0 0x391 0x1",
			"own 6 0x3b0 0x7 -",
			"own 6 0x3c0 0x0 0x420167",
			"bits 6 0x391 0x1",
			"own 1 0x186 0x0 0x43003c",
			"drop 1 0x186", NULL),
		 "own 0 0x3c1 0x0 0x4601");   /* cut short by the kill: not damage */
	helpers_write_file(f->path, text);
	assert_int_equal(recovery_open(f->path, "/", &f->hw, &lf, &rec, err, sizeof(err)), 0);
	assert_true(rec.found);
	assert_int_equal(rec.cleaned, 3);
	assert_int_equal(rec.left, 2);
	assert_int_equal(rec.failed, 0);
	assert_int_equal(rec.damaged, 0);
	assert_false(rec.header_damaged);
	assert_false(rec.kept);
	snprintf(aside, sizeof(aside), "%s.damaged", f->path);
	assert_int_equal(access(aside, F_OK), -1);
	assert_int_equal(reg(f, 0, 0x3c0), 0);
	assert_int_equal(reg(f, 0, 0x391), 0x80);   /* another agent's bit 7 survives */
	assert_int_equal(reg(f, 0, 0x3b0), 0x5);
	assert_int_equal(reg(f, 6, 0x3c0), 0x400160);
	assert_int_equal(reg(f, 6, 0x391), 0x1);
	assert_int_equal(reg(f, 6, 0x3b0), 0x888);
	assert_string_equal(slurp(f->path), sealed("uncored-ledger 2 /", NULL));
	state_file_close(lf);
}

/*
 * Another agent took fixed counter 1 over while uncored was dead: its
 * field of IA32_FIXED_CTR_CTRL holds the agent's 0xb, no longer uncored's
 * 0x3, and it set its gate bit 33 (uncored's already).  Recovery clears
 * only uncored's fields and gate bits still its own and puts back only
 * the counters still its own; the taken field, gate bit and counter stay.
 */
static void recovery_leaves_a_fixed_counter_taken_over(void **state)
{
	struct fixture *f = *state;
	struct ledger_recovery rec;
	struct state_file *lf;
	char err[256] = "";

	assert_int_equal(sim_poke(f->sim, 0, IA32_FIXED_CTR_CTRL, 0x333 | 0xb0), 0);
	assert_int_equal(sim_poke(f->sim, 0, IA32_PERF_GLOBAL_CTRL, UINT64_C(7) << 32), 0);
	for (uint32_t i = 0; i < 3; i++)
		assert_int_equal(sim_poke(f->sim, 0, IA32_FIXED_CTR0 + i, 0x100 * (i + 1)), 0);
	helpers_write_file(f->path, sealed("uncored-ledger 2 /",
					   "own 0 0x309 0x0 -", "own 0 0x30a 0x0 -",
					   "own 0 0x30b 0x0 -", "bits 0 0x38d 0x333",
					   "bits 0 0x38f 0x700000000", NULL));
	assert_int_equal(recovery_open(f->path, "/", &f->hw, &lf, &rec, err, sizeof(err)), 0);
	assert_int_equal(rec.cleaned, 4);
	assert_int_equal(rec.left, 3);
	assert_int_equal(rec.failed, 0);
	assert_int_equal(reg(f, 0, IA32_FIXED_CTR_CTRL), 0xb0);
	assert_int_equal(reg(f, 0, IA32_PERF_GLOBAL_CTRL), UINT64_C(1) << 33);
	assert_int_equal(reg(f, 0, IA32_FIXED_CTR0), 0);
	assert_int_equal(reg(f, 0, IA32_FIXED_CTR0 + 1), 0x200);
	assert_int_equal(reg(f, 0, IA32_FIXED_CTR0 + 2), 0);
	state_file_close(lf);
}

/*
 * Records of a CPU that is offline at recovery cannot be applied: they are
 * counted as failed, listed by state_file_left with their error, journaled
 * again at once, and handed to the register ledger, which puts them back once
 * the CPU is online.  A stop with registers left keeps the file.
 */
static void records_of_an_offline_cpu_are_kept(void **state)
{
	struct fixture *f = *state;
	const struct ledger_record *v;
	struct ledger_recovery rec, done;
	struct state_file *lf;
	const int *errs;
	char err[256] = "";

	assert_int_equal(sim_poke(f->sim, 0, 0x3c0, 0x420167), 0);
	assert_int_equal(sim_poke(f->sim, 1, 0x186, 0x43003c), 0);
	assert_int_equal(sim_poke(f->sim, 1, 0x38f, 0x1), 0);
	helpers_write_file(f->path, sealed("uncored-ledger 2 /",
					   "own 0 0x3c0 0x0 0x420167",
					   "own 1 0x186 0x0 0x43003c",
					   "bits 1 0x38f 0x1", NULL));
	assert_int_equal(sim_set_online(f->sim, 1, false), 0);
	assert_int_equal(recovery_open(f->path, "/", &f->hw, &lf, &rec, err, sizeof(err)), 0);
	assert_true(rec.found);
	assert_int_equal(rec.cleaned, 1);
	assert_int_equal(rec.failed, 2);
	assert_int_equal(reg(f, 0, 0x3c0), 0);
	assert_int_equal(state_file_left(lf, &v, &errs), 2);
	assert_int_equal(v[0].cpu, 1);
	assert_int_equal(v[0].msr, 0x186);
	assert_int_equal(errs[0], -ENXIO);
	assert_int_equal(v[1].kind, LEDGER_BITS);
	assert_int_equal(errs[1], -ENXIO);
	/* Journaled again before anything else, so a kill now loses nothing. */
	assert_string_equal(slurp(f->path), sealed("uncored-ledger 2 /",
						    "own 1 0x186 0x0 0x43003c",
						    "bits 1 0x38f 0x1", NULL));
	ledger_set_journal(lf);
	assert_int_equal(ledger_left(&v, NULL), 2);
	assert_int_equal(ledger_finish_left(&f->hw, &done), 0);
	/* The rewrite's checkpoint, after the records it is too long to replace. */
	assert_string_equal(slurp(f->path), sealed("uncored-ledger 2 /",
						    "own 1 0x186 0x0 0x43003c",
						    "bits 1 0x38f 0x1", "state 2",
						    "own 1 0x186 0x0 0x43003c",
						    "bits 1 0x38f 0x1", NULL));
	assert_int_equal(sim_set_online(f->sim, 1, true), 0);
	assert_int_equal(ledger_finish_left(&f->hw, &done), 2);
	assert_int_equal(done.cleaned, 2);
	assert_int_equal(reg(f, 1, 0x186), 0);
	assert_int_equal(reg(f, 1, 0x38f), 0);
	assert_int_equal(ledger_left(&v, NULL), 0);
	ledger_set_journal(NULL);
	state_file_close(lf);
	assert_int_equal(access(f->path, F_OK), -1);
}

/* A stop that left registers keeps the file as it is, for the next start. */
static void keep_leaves_the_records(void **state)
{
	struct fixture *f = *state;
	const char *text = sealed("uncored-ledger 2 /", "own 1 0x186 0x0 0x43003c", NULL);
	struct ledger_recovery rec;
	struct state_file *lf;
	char err[256] = "", copy[8192];

	helpers_write_file(f->path, text);
	assert_int_equal(sim_set_online(f->sim, 1, false), 0);
	assert_int_equal(recovery_open(f->path, "/", &f->hw, &lf, &rec, err, sizeof(err)), 0);
	assert_int_equal(rec.failed, 1);
	snprintf(copy, sizeof(copy), "%s", slurp(f->path));
	state_file_keep(lf);
	assert_string_equal(slurp(f->path), copy);
	assert_string_equal(copy, text);
}

static void refuses_foreign_files_and_a_held_lock(void **state)
{
	struct fixture *f = *state;
	struct ledger_recovery rec;
	struct state_file *lf, *second;
	char err[256] = "";

	helpers_write_file(f->path, "something else\n");
	assert_int_equal(recovery_open(f->path, "/", &f->hw, &lf, &rec, err, sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "not an uncored state file"));
	assert_string_equal(slurp(f->path), "something else\n");

	/* Written for another device root: discarded, nothing applied. */
	assert_int_equal(sim_poke(f->sim, 0, 0x3c0, 0x400167), 0);
	helpers_write_file(f->path, sealed("uncored-ledger 2 /srv/tree", "own 0 0x3c0 0x0 0x400167", NULL));
	assert_int_equal(recovery_open(f->path, "/", &f->hw, &lf, &rec, err, sizeof(err)), 0);
	assert_false(rec.found);
	assert_int_equal(reg(f, 0, 0x3c0), 0x400167);

	err[0] = '\0';
	assert_int_equal(recovery_open(f->path, "/", &f->hw, &second, &rec, err, sizeof(err)), -EBUSY);
	assert_non_null(strstr(err, "in use by another uncored process"));
	state_file_close(lf);
}

/*
 * A corrupt header and garbled records: every record whose checksum holds
 * is still replayed, the damage is counted with its first line, and the
 * file is kept as PATH.damaged before a fresh journal starts.
 */
static void damage_is_reported_and_the_rest_recovered(void **state)
{
	struct fixture *f = *state;
	struct ledger_recovery rec;
	struct state_file *lf;
	char err[256] = "", text[4096], aside[4300];
	const char *good;

	assert_int_equal(sim_poke(f->sim, 0, 0x3c0, 0x420167), 0);
	assert_int_equal(sim_poke(f->sim, 0, 0x3c1, 0x420182), 0);
	good = sealed("own 0 0x3c0 0x0 0x420167", "own 0 0x3c1 0x0 0x420182", NULL);
	snprintf(text, sizeof(text), "uncored-ledgxr 2 / *00000000\n%s", good);
	/* One flipped bit in the second record: its checksum no longer holds. */
	text[strlen(text) - 20] ^= 0x01;
	helpers_write_file(f->path, text);
	assert_int_equal(recovery_open(f->path, "/", &f->hw, &lf, &rec, err, sizeof(err)), 0);
	assert_true(rec.found);
	assert_true(rec.header_damaged);
	assert_int_equal(rec.damaged, 1);
	assert_int_equal(rec.first_damaged_line, 3);
	assert_int_equal(rec.cleaned, 1);
	assert_true(rec.kept);
	assert_int_equal(reg(f, 0, 0x3c0), 0);
	/* Its record was damaged: left as it is (OCC_CTR_RST, bit 17, reads 0). */
	assert_int_equal(reg(f, 0, 0x3c1), 0x400182);
	snprintf(aside, sizeof(aside), "%s.damaged", f->path);
	assert_string_equal(slurp(aside), text);
	assert_string_equal(slurp(f->path), sealed("uncored-ledger 2 /", NULL));
	state_file_close(lf);

	/* Recovery is not off for good: the next start works on the fresh file. */
	assert_int_equal(recovery_open(f->path, "/", &f->hw, &lf, &rec, err, sizeof(err)), 0);
	assert_false(rec.found);
	state_file_close(lf);
}

/* A file planted with registers uncored never programs: nothing replayed. */
static void registers_outside_the_allow_list_are_refused(void **state)
{
	struct fixture *f = *state;
	struct ledger_recovery rec;
	struct state_file *lf;
	char err[256] = "";
	uint64_t misc, target = reg(f, 0, 0x1a2), now;
	int misc_err = hw_read_msr(&f->hw, 0, 0x1a0, &misc);

	assert_int_equal(sim_poke(f->sim, 0, 0x38f, 0x1ff), 0);
	helpers_write_file(f->path, sealed("uncored-ledger 2 /",
					   "own 0 0x1a0 0x4141414141 -",              /* IA32_MISC_ENABLE */
					   "own 0 0x1a2 0x0 0x0",                     /* TEMPERATURE_TARGET */
					   "bits 0 0x38f 0x100", NULL));              /* not an enable bit */
	assert_int_equal(recovery_open(f->path, "/", &f->hw, &lf, &rec, err, sizeof(err)), 0);
	assert_int_equal(rec.refused, 3);
	assert_int_equal(rec.refused_cpu, 0);
	assert_int_equal(rec.refused_msr, 0x1a0);
	assert_int_equal(rec.cleaned + rec.left + rec.failed, 0);
	assert_int_equal(hw_read_msr(&f->hw, 0, 0x1a0, &now), misc_err);
	if (!misc_err)
		assert_int_equal(now, misc);
	assert_int_equal(reg(f, 0, 0x1a2), target);
	assert_int_equal(reg(f, 0, 0x38f), 0x1ff);
	state_file_close(lf);
}

static bool owned_allowed(uint32_t msr)
{
	return recovery_allowed(&(struct ledger_record){ .kind = LEDGER_OWN, .cpu = 0, .msr = msr,
							 .has_written = true });
}

static bool bits_allowed(uint32_t msr, uint64_t bits)
{
	return recovery_allowed(&(struct ledger_record){ .kind = LEDGER_BITS, .cpu = 0, .msr = msr,
							 .bits = bits });
}

/*
 * The allow-list is the msr engine's register table: every select and
 * counter it may use, the PCU boxes' included, and in shared registers
 * only the bits it may set; never a PCU box's BOX_CTL, FILTER or STATUS.
 */
static void the_allow_list_is_the_engines_register_table(void **state)
{
	(void)state;
	for (uint32_t i = 0; i < 4; i++) {
		assert_true(owned_allowed(HSWEP_PCU_MSR_CTL0 + i));
		assert_true(owned_allowed(HSWEP_PCU_MSR_CTR0 + i));
		assert_true(owned_allowed(SNBEP_PCU_MSR_CTL0 + i));
		assert_true(owned_allowed(SNBEP_PCU_MSR_CTR0 + i));
	}
	assert_false(owned_allowed(HSWEP_PCU_MSR_BOX_CTL));
	assert_false(owned_allowed(HSWEP_PCU_MSR_FILTER));
	assert_false(owned_allowed(HSWEP_PCU_MSR_STATUS));
	assert_false(owned_allowed(HSWEP_PCU_MSR_CTR0 + 4));
	assert_false(owned_allowed(SNBEP_PCU_MSR_BOX_CTL));
	assert_false(owned_allowed(SNBEP_PCU_MSR_FILTER));
	assert_false(bits_allowed(HSWEP_PCU_MSR_CTL0, PCU_CTL_EN));
	/* The core PMU: three fixed counters, whole nibbles, every gate bit it may set. */
	assert_true(owned_allowed(IA32_FIXED_CTR0 + 2));
	assert_false(owned_allowed(IA32_FIXED_CTR0 + 3));
	assert_true(owned_allowed(IA32_A_PMC0 + 7));
	assert_true(bits_allowed(IA32_FIXED_CTR_CTRL, 0xfff));
	assert_false(bits_allowed(IA32_FIXED_CTR_CTRL, 0x1000));
	assert_true(bits_allowed(IA32_PERF_GLOBAL_CTRL, 0x7000000ff));
	assert_false(bits_allowed(IA32_PERF_GLOBAL_CTRL, MSR_BIT(35)));
	assert_false(owned_allowed(IA32_PERF_GLOBAL_CTRL));
	/* The Nehalem/Westmere uncore's fixed control: its enable bit, or owned by earlier versions. */
	assert_true(bits_allowed(MSR_UNCORE_FIXED_CTR_CTRL, UNC_FIXED_CTR_CTRL_EN));
	assert_false(bits_allowed(MSR_UNCORE_FIXED_CTR_CTRL, UNC_FIXED_CTR_CTRL_PMI));
	assert_true(owned_allowed(MSR_UNCORE_FIXED_CTR_CTRL));
	assert_false(owned_allowed(MSR_UNCORE_PERF_GLOBAL_OVF_CTRL));
}

/* Forged files and directories are refused and left as they are, registers too. */
static void untrusted_files_are_refused(void **state)
{
	struct fixture *f = *state;
	struct ledger_recovery rec;
	struct state_file *lf;
	char err[256], sub[4300], target[4400];
	const char *text = sealed("uncored-ledger 2 /", "own 0 0x3c0 0x0 0x420167", NULL);

	assert_int_equal(sim_poke(f->sim, 0, 0x3c0, 0x420167), 0);
	helpers_write_file(f->path, text);
	chmod(f->path, 0666);
	err[0] = '\0';
	assert_int_equal(recovery_open(f->path, "/", &f->hw, &lf, &rec, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "writable by group or others, so it is not trusted"));
	chmod(f->path, 0600);
	if (geteuid() == 0) {
		assert_int_equal(chown(f->path, 1000, 1000), 0);
		err[0] = '\0';
		assert_int_equal(recovery_open(f->path, "/", &f->hw, &lf, &rec, err, sizeof(err)),
				 -EPERM);
		assert_non_null(strstr(err, "not owned by root"));
	}
	assert_string_equal(slurp(f->path), text);
	unlink(f->path);

	/* A symbolic link, a FIFO (must not block) and a directory. */
	snprintf(target, sizeof(target), "%s/elsewhere", f->dir);
	helpers_write_file(target, text);
	assert_int_equal(symlink(target, f->path), 0);
	err[0] = '\0';
	assert_int_equal(recovery_open(f->path, "/", &f->hw, &lf, &rec, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "symbolic link"));
	unlink(f->path);
	assert_int_equal(mkfifo(f->path, 0600), 0);
	err[0] = '\0';
	assert_int_equal(recovery_open(f->path, "/", &f->hw, &lf, &rec, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "not a regular file"));
	unlink(f->path);

	/* A directory anyone may write to. */
	snprintf(sub, sizeof(sub), "%s/open", f->dir);
	assert_int_equal(mkdir(sub, 0777), 0);
	chmod(sub, 0777);
	snprintf(target, sizeof(target), "%s/ledger", sub);
	helpers_write_file(target, text);
	err[0] = '\0';
	assert_int_equal(recovery_open(target, "/", &f->hw, &lf, &rec, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "writable by group or others, so the state file in it is not trusted"));
	assert_string_equal(slurp(target), text);

	/* Below a directory anyone may write to, and through a symbolic link. */
	snprintf(target, sizeof(target), "%s/safe", sub);
	assert_int_equal(mkdir(target, 0755), 0);
	snprintf(target, sizeof(target), "%s/safe/ledger", sub);
	err[0] = '\0';
	assert_int_equal(recovery_open(target, "/", &f->hw, &lf, &rec, err, sizeof(err)), -EPERM);
	snprintf(target, sizeof(target), "directory %s: writable by group or others, so the state "
		 "file under it is not trusted", sub);
	assert_string_equal(err, target);
	chmod(sub, 0755);
	snprintf(target, sizeof(target), "%s/link", f->dir);
	assert_int_equal(symlink(sub, target), 0);
	snprintf(target, sizeof(target), "%s/link/ledger", f->dir);
	err[0] = '\0';
	assert_int_equal(recovery_open(target, "/", &f->hw, &lf, &rec, err, sizeof(err)), -EPERM);
	assert_int_equal(state_file_check_path(target, err, sizeof(err)), -EPERM);
	snprintf(target, sizeof(target), "directory %s/link: a symbolic link, so the state file in "
		 "it is not trusted", f->dir);
	assert_string_equal(err, target);
	assert_int_equal(reg(f, 0, 0x3c0), 0x400167);
}

/*
 * A full file system (here a file size limit): the record cannot be
 * written, so neither is the register, and ledger_hint says why.
 */
static void a_full_disk_stops_the_write(void **state)
{
	struct fixture *f = *state;
	struct ledger_recovery rec;
	struct state_file *lf;
	struct ledger *l;
	struct rlimit old, small;
	char err[256] = "", before[8192];
	struct stat st;
	int r = 0, n = 0;

	assert_int_equal(recovery_open(f->path, "/", &f->hw, &lf, &rec, err, sizeof(err)), 0);
	ledger_set_journal(lf);
	l = ledger_new();
	signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(stat(f->path, &st), 0);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	small = old;
	small.rlim_cur = (rlim_t)st.st_size + 100;   /* room for two records, not three */
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
	for (uint32_t msr = 0x3c0; msr < 0x3c4 && r == 0; msr++, n++) {
		snprintf(before, sizeof(before), "%s", slurp(f->path));
		r = ledger_write(l, &f->hw, 0, msr, 0x420100 + msr);
	}
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, SIG_DFL);
	assert_int_equal(r, -EFBIG);
	assert_int_equal(n, 3);
	assert_int_equal(reg(f, 0, 0x3c2), 0);           /* not written */
	assert_int_equal(ledger_count(l), 2);
	assert_string_equal(slurp(f->path), before);     /* no half record */
	assert_string_equal(ledger_hint(r, HW_OP_WRITE),
			    "the state file cannot record the change (File too large), so it was not made");
	assert_int_equal(state_file_error(lf), -EFBIG);
	/* Undoing is never held back. */
	assert_int_equal(ledger_restore(l, &f->hw, NULL), 0);
	assert_int_equal(reg(f, 0, 0x3c0), 0);
	ledger_free(l);
	ledger_set_journal(NULL);
	state_file_close(lf);
}

static void kill_self(int step)
{
	const char *want = getenv("UNCORED_TEST_KILL_STEP");

	if (want && atoi(want) == step)
		raise(SIGKILL);
}

/*
 * SIGKILL at each step of a rewrite: whatever the file holds then, the
 * restart restores every register and reports no damage.
 */
static void a_kill_during_a_rewrite_loses_nothing(void **state)
{
	struct fixture *f = *state;

	for (int step = 1; step <= 3; step++) {
		struct ledger_recovery rec;
		struct state_file *lf;
		char err[256] = "", env[8];
		int status;
		pid_t pid;

		unlink(f->path);
		snprintf(env, sizeof(env), "%d", step);
		setenv("UNCORED_TEST_KILL_STEP", env, 1);
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			struct ledger *l;

			if (recovery_open(f->path, "/", &f->hw, &lf, &rec, err, sizeof(err)))
				_exit(2);
			ledger_set_journal(lf);
			l = ledger_new();
			/* Enough churn that the checkpoint fits before its copy. */
			for (int k = 0; k < 40; k++)
				ledger_write(l, &f->hw, 0, 0x3c0 + (uint32_t)(k % 4), 0x420000 + (uint64_t)k);
			state_file_rewrite_hook = kill_self;
			ledger_move_cpu(l, 0, 0);   /* no-op */
			ledger_set_journal(lf);     /* rewrites */
			_exit(3);
		}
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
		/* What the killed process left in the registers (its machine was a copy). */
		for (uint32_t k = 36; k < 40; k++)
			assert_int_equal(sim_poke(f->sim, 0, 0x3c0 + k % 4, 0x420000 + k), 0);
		assert_int_equal(recovery_open(f->path, "/", &f->hw, &lf, &rec, err, sizeof(err)), 0);
		assert_true(rec.found);
		assert_int_equal(rec.cleaned, 4);
		assert_int_equal(rec.damaged, 0);
		assert_false(rec.kept);
		for (uint32_t k = 0; k < 4; k++)
			assert_int_equal(reg(f, 0, 0x3c0 + k), 0);
		state_file_close(lf);
	}
	unsetenv("UNCORED_TEST_KILL_STEP");
}

/*
 * SIGKILL in the middle of the copy over the old records (step 2): the
 * front of the file holds the first k bytes of the checkpoint, then what
 * is left of the old records, then the whole checkpoint.  For every k the
 * restart restores every register and reports no damage.
 */
static void a_torn_copy_loses_nothing(void **state)
{
	struct fixture *f = *state;
	static char whole[8192];
	size_t len, header_len, ckpt_at;
	char err[256] = "", *mark;
	int status;
	pid_t pid;
	FILE *fp;

	unlink(f->path);
	setenv("UNCORED_TEST_KILL_STEP", "1", 1);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct ledger_recovery rec;
		struct state_file *lf;
		struct ledger *l;

		if (recovery_open(f->path, "/", &f->hw, &lf, &rec, err, sizeof(err)))
			_exit(2);
		ledger_set_journal(lf);
		l = ledger_new();
		for (int k = 0; k < 40; k++)
			ledger_write(l, &f->hw, 0, 0x3c0 + (uint32_t)(k % 4), 0x420000 + (uint64_t)k);
		state_file_rewrite_hook = kill_self;
		ledger_set_journal(lf);   /* rewrites; killed once the checkpoint is appended */
		_exit(3);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	unsetenv("UNCORED_TEST_KILL_STEP");
	fp = fopen(f->path, "rb");
	assert_non_null(fp);
	len = fread(whole, 1, sizeof(whole), fp);
	fclose(fp);
	assert_true(len < sizeof(whole));
	header_len = (size_t)((char *)memchr(whole, '\n', len) - whole) + 1;
	mark = NULL;
	for (char *p = whole; (p = memmem(p, len - (size_t)(p - whole), "\nstate ", 7)); p++)
		mark = p;
	assert_non_null(mark);
	ckpt_at = (size_t)(mark - whole) + 1;
	assert_true(header_len + (len - ckpt_at) <= ckpt_at);   /* the copy fits before it */
	for (size_t k = 0; k <= len - ckpt_at; k++) {
		struct ledger_recovery rec;
		struct state_file *lf;

		fp = fopen(f->path, "wb");
		assert_non_null(fp);
		fwrite(whole, 1, header_len, fp);
		fwrite(whole + ckpt_at, 1, k, fp);
		fwrite(whole + header_len + k, 1, len - header_len - k, fp);
		assert_int_equal(fclose(fp), 0);
		chmod(f->path, 0600);
		for (uint32_t i = 36; i < 40; i++)
			assert_int_equal(sim_poke(f->sim, 0, 0x3c0 + i % 4, 0x420000 + i), 0);
		assert_int_equal(recovery_open(f->path, "/", &f->hw, &lf, &rec, err, sizeof(err)), 0);
		assert_true(rec.found);
		if (rec.cleaned != 4 || rec.damaged || rec.header_damaged || rec.kept)
			fail_msg("torn at byte %zu: cleaned %u, damaged %u", k, rec.cleaned, rec.damaged);
		for (uint32_t i = 0; i < 4; i++)
			assert_int_equal(reg(f, 0, 0x3c0 + i), 0);
		state_file_close(lf);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(journals_each_change_before_the_write, setup, teardown),
		cmocka_unit_test_setup_teardown(recovery_restores_ours_and_leaves_theirs, setup, teardown),
		cmocka_unit_test_setup_teardown(recovery_leaves_a_fixed_counter_taken_over, setup,
						teardown),
		cmocka_unit_test_setup_teardown(records_of_an_offline_cpu_are_kept, setup, teardown),
		cmocka_unit_test_setup_teardown(keep_leaves_the_records, setup, teardown),
		cmocka_unit_test_setup_teardown(refuses_foreign_files_and_a_held_lock, setup, teardown),
		cmocka_unit_test_setup_teardown(damage_is_reported_and_the_rest_recovered, setup, teardown),
		cmocka_unit_test_setup_teardown(registers_outside_the_allow_list_are_refused, setup, teardown),
		cmocka_unit_test(the_allow_list_is_the_engines_register_table),
		cmocka_unit_test_setup_teardown(untrusted_files_are_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(a_full_disk_stops_the_write, setup, teardown),
		cmocka_unit_test_setup_teardown(a_kill_during_a_rewrite_loses_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(a_torn_copy_loses_nothing, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
