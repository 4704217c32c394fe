"""Every benchmark figure names its machine type: the CPU flags are read from the cpuinfo ``flags`` line."""

from __future__ import annotations

from parserfree.export.timing import cpu_flags, describe_machine, machine, machine_type

AVX2_ONLY = "processor\t: 0\nmodel name\t: AMD EPYC\nflags\t\t: fpu sse2 avx avx2 fma avx_vnni_int8\n"
AVX512 = "model name\t: Xeon\nflags\t\t: fpu avx2 avx512f avx512bw avx512_vnni\nbugs\t\t: avx512_vnni_fake\n"


def test_avx2_machine_is_not_taken_for_avx512_or_vnni():
    """Catches a substring test: ``avx_vnni_int8`` is not ``avx_vnni``, and no avx512 flag means no AVX-512."""
    flags = cpu_flags(AVX2_ONLY)
    assert flags == {"avx2": True, "avx512f": False, "avx512_vnni": False, "avx_vnni": False, "amx_tile": False}
    assert machine_type(flags) == "AVX2, no AVX-512"


def test_avx512_with_vnni_is_its_own_machine_type():
    flags = cpu_flags(AVX512)
    assert flags["avx512f"] and flags["avx512_vnni"] and not flags["avx_vnni"]
    assert machine_type(flags) == "AVX-512 + VNNI"
    assert machine_type(cpu_flags("flags : avx2 avx512f\n")) == "AVX-512"
    assert machine_type(cpu_flags("")) == "no AVX2"


def test_the_recorded_machine_carries_its_flags_and_type():
    info = machine()
    assert set(info["cpu_flags"]) >= {"avx2", "avx512f", "avx512_vnni"}
    assert info["machine_type"] == machine_type(info["cpu_flags"])
    assert info["machine_type"] in describe_machine(info)
