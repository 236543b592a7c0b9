#!/usr/bin/env python3
"""Build a fake device-file tree of a 2-socket Westmere-EP for uncored --root.

Writes <root>/dev/cpu/N/msr and <root>/dev/cpu/N/cpuid as sparse regular
files with one slot per address (offset = MSR x 8, CPUID (leaf | subleaf <<
32) x 16, as uncored's device backend reads regular files), and
<root>/sys/devices/system/cpu/cpuN/topology/* like the kernel's sysfs.  The
register values are what a Westmere-EP could hold at boot, with an uncore
counter 7 and its enable bit already taken by another agent so the daemon
must leave them alone.

Usage: make_tree.py ROOT [--cores N] [--dies N] [--boot linux] [--pmus] build the tree
       make_tree.py ROOT [--cores N] [--dies N] [--boot linux] --dump   print every register
       make_tree.py ROOT --model MODEL [--dump]      a simulated model's tree, or its registers

--cores N gives each socket N cores instead of 6 (core ids 0..N-1), as for
the benchmark's 2 x 56 x 2 machine.

--dies N splits each socket's cores into N dies (topology/die_id, the first
cores on die 0), as on a multi-die package.  Each die then holds its own
package-scope values, which tell where a reading came from: die D has
TjMax 95 + 5 x D in MSR_TEMPERATURE_TARGET and a kernel
thermal_throttle/package_throttle_count of 3 + D.

--boot linux starts the PMU as a Linux host leaves it (hardware-linux.md
§1.1-§1.3), as the simulator's SIM_BOOT_LINUX does: IA32_PERF_GLOBAL_CTRL
(0x38f) = intel_ctrl 0x70000000f, the NMI watchdog's cycles on fixed counter
1 (0x38d = 0xb0), perf's stale select 0x13003c (EN clear) on GP counter 0,
and 0x391 = 0x1000000ff as after perf uncore use; uncore counter 7 stays
another agent's.

--pmus also writes the kernel's PMU tree, <root>/sys/bus/event_source/devices
("cpu", and "uncore" with cpumask 0,6), exactly as the simulator shows it
for westmere-ep-2s (the same 2 x 6 x 2 machine): the simulator's own writer
does it, through the sim-tree program named by $UNCORED_SIM_TREE_BIN (built
in tests/).  Not with --cores or --dies, which the simulated model lacks.

--model MODEL writes the whole tree of a simulated model instead (registers
as it boots under Linux, CPUID, topology, throttle counts and its PMU tree:
skylake-sp-2s has uncore_pcu and uncore_imc_0..5 with cpumask 0,28), all by
sim-tree; with --dump, the model's registers as the tree holds them now.
"""
import os
import struct
import subprocess
import sys

SOCKETS, CORES, THREADS = 2, 6, 2
DIES = 1
CORE_IDS = [0, 1, 2, 8, 9, 10]
MSR_SIZE = 8 << 32

# (msr, value) per CPU; uncore registers are package scope but the files are
# per CPU, so every CPU of a socket gets the same initial values.
UNCORE = {
    0x391: 0x80,                   # EN_PC7 set by another agent
    0x3c7: 0x400166,               # another agent's event in counter 7
    0x3b7: 0x1234,
    0x395: 0x0,
    0x394: 0x10,
}
for n in range(7):
    UNCORE[0x3c0 + n] = 0
    UNCORE[0x3b0 + n] = 0x100 * (n + 1)
CORE = {0x19c: 0x88280000, 0x1a2: 0x5f0000, 0x38d: 0, 0x38f: 0, 0x38e: 0}
for n in range(4):
    CORE[0x186 + n] = 0
    CORE[0xc1 + n] = 0
for n in range(3):
    CORE[0x309 + n] = 0


def boot_linux():
    UNCORE[0x391] = 0x1000000FF    # perf uncore's enable_box, every GP and the fixed enable
    CORE[0x38f] = 0x70000000F      # intel_ctrl: 4 GP + 3 fixed
    CORE[0x38d] = 0xB0             # NMI watchdog on fixed counter 1: PMI|USR|OS
    CORE[0x30a] = 0x2540BE400      # the watchdog's counter has counted
    CORE[0x186] = 0x13003C         # cycles select perf left behind, EN clear


def cpus():
    cpu = 0
    for thread in range(THREADS):
        for socket in range(SOCKETS):
            for core in range(CORES):
                yield cpu, socket, CORE_IDS[core], thread
                cpu += 1


def die_of(core_id):
    return CORE_IDS.index(core_id) * DIES // CORES


def die_values(die):
    """The package-scope registers that differ per die (only with --dies)."""
    return {0x1a2: (95 + 5 * die) << 16} if DIES > 1 else {}


def package_shift():
    """APIC id bits below the package id: one thread bit and the core bits."""
    return 1 + max(4, max(CORE_IDS).bit_length())


def cpuid_leaves(socket, core, thread):
    vendor = b"GenuineIntel"
    ebx, edx, ecx = (struct.unpack("<I", vendor[i:i + 4])[0] for i in (0, 4, 8))
    apic = (socket << package_shift()) | (core << 1) | thread
    return {
        (0x0, 0): (0xB, ebx, ecx, edx),
        (0x1, 0): (0x206C2, apic << 24, 0, (1 << 5) | (1 << 22)),
        (0x6, 0): (0x5, 0, 0, 0),
        (0xA, 0): (0x07300403, 0, 0, 0x603),
        (0xB, 0): (1, 2, 0x100, apic),
        (0xB, 1): (package_shift(), CORES * THREADS, 0x201, apic),
    }


def write_file(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def build(root):
    sysdir = os.path.join(root, "sys/devices/system/cpu")
    # Every Linux host has it; 2 is the kernel's default since 4.6 (Debian's is 3).
    write_file(os.path.join(root, "proc/sys/kernel/perf_event_paranoid"), "2\n")
    for cpu, socket, core, thread in cpus():
        devdir = os.path.join(root, "dev/cpu", str(cpu))
        os.makedirs(devdir, exist_ok=True)
        with open(os.path.join(devdir, "msr"), "wb") as f:
            f.truncate(MSR_SIZE)
            for msr, value in list(UNCORE.items()) + list(CORE.items()) + list(die_values(die_of(core)).items()):
                f.seek(msr * 8)
                f.write(struct.pack("<Q", value))
        with open(os.path.join(devdir, "cpuid"), "wb") as f:
            for (leaf, sub), regs in cpuid_leaves(socket, core, thread).items():
                f.seek((leaf | (sub << 32)) * 16)
                f.write(struct.pack("<4I", *regs))
        top = os.path.join(sysdir, "cpu%d" % cpu, "topology")
        write_file(os.path.join(top, "physical_package_id"), "%d\n" % socket)
        write_file(os.path.join(top, "core_id"), "%d\n" % core)
        write_file(os.path.join(top, "die_id"), "%d\n" % die_of(core))
        if cpu != 0:
            write_file(os.path.join(sysdir, "cpu%d" % cpu, "online"), "1\n")
        write_file(os.path.join(sysdir, "cpu%d" % cpu, "thermal_throttle/core_throttle_count"), "0\n")
        if DIES > 1:
            write_file(os.path.join(sysdir, "cpu%d" % cpu, "thermal_throttle/package_throttle_count"),
                       "%d\n" % (3 + die_of(core)))


def sim_tree(mode, model, root):
    exe = os.environ.get("UNCORED_SIM_TREE_BIN")
    if not exe:
        sys.exit("make_tree.py: --pmus and --model need $UNCORED_SIM_TREE_BIN (the sim-tree program)")
    sys.stdout.flush()
    subprocess.run([exe, mode, model, root], check=True)


def dump(root):
    for cpu, _, _, _ in cpus():
        with open(os.path.join(root, "dev/cpu", str(cpu), "msr"), "rb") as f:
            for msr in sorted(set(UNCORE) | set(CORE)):
                f.seek(msr * 8)
                print("cpu%d 0x%x 0x%x" % (cpu, msr, struct.unpack("<Q", f.read(8))[0]))


if __name__ == "__main__":
    args = sys.argv[1:]
    if "--model" in args:
        i = args.index("--model")
        model = args[i + 1:i + 2]
        del args[i:i + 2]
        if len(model) != 1 or len(args) not in (1, 2) or args[1:] not in ([], ["--dump"]) or \
                args[0].startswith("-"):
            sys.exit(__doc__)
        sim_tree("--dump" if args[1:] else "--machine", model[0], args[0])
        sys.exit(0)
    if "--cores" in args:
        i = args.index("--cores")
        CORES = int(args[i + 1])
        if CORES != 6:
            CORE_IDS = list(range(CORES))
        del args[i:i + 2]
    if "--dies" in args:
        i = args.index("--dies")
        DIES = int(args[i + 1])
        if not 1 <= DIES <= CORES:
            sys.exit(__doc__)
        del args[i:i + 2]
    if "--boot" in args:
        i = args.index("--boot")
        if args[i + 1:i + 2] != ["linux"]:
            sys.exit(__doc__)
        boot_linux()
        del args[i:i + 2]
    pmus = "--pmus" in args
    if pmus:
        args.remove("--pmus")
        if CORES != 6 or DIES != 1:
            sys.exit("make_tree.py: --pmus: only the 2 x 6 x 2 tree of westmere-ep-2s\n" + __doc__)
    # A root that looks like an option (--help) is a mistake: its tree, of
    # sparse files tens of GiB long, would land in the current directory.
    if args and args[0].startswith("-"):
        sys.exit(__doc__)
    if len(args) == 2 and args[1] == "--dump":
        dump(args[0])
    elif len(args) == 1:
        build(args[0])
        if pmus:
            sim_tree("--pmus", "westmere-ep-2s", args[0])
    else:
        sys.exit(__doc__)
