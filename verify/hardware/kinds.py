"""The probe kinds: instruction family -> how its probes are built, run, simulated and judged.

A ``Kind`` says, for the instruction families it covers, how to turn an instruction's layouts into probes
(``build``), the standalone CUDA program of one probe (``program``: its kernel and a host ``main``
printing the raw JSON), what a SIMULATED device prints for it (``simulate``), how an observation becomes
one ``HardwareResult`` per tested layout (``judge``) and what an observation file holds (``record``).
Everything else (``probe``, ``confirm``, ``check --observations``) goes through ``KINDS``.

* ``mma`` (mma, mma.sp) and ``wgmma`` (wgmma, wgmma.sp): relational experiments on raw D registers
  (``probes``, ``wgmma``, ``observe``);
* ``movement`` (ldmatrix, stmatrix, movmatrix, tcgen05.ld, tcgen05.st): codes that name their own cells
  (``catalog_probes``);
* ``wmma``: coded loads, the map reported as observed (``wmma``);
* ``block_scale`` (mma .block_scale selectors): one hot scale factor per experiment (``blockscale``);
* ``tcgen05_mma`` (tcgen05.mma scale factor ids): ``tcgen05_scale``;
* ``shared`` (the catalog's shared-memory map layouts, ``kind = "shared"``: no instruction group, built from
  the map layouts passed as ``maps``): ldmatrix and wgmma-descriptor reads of a coded tile (``smem_kind``;
  32-bit elements as two 16-bit halves, through ldmatrix only).  Map layouts nothing reads (storage) are
  named with why in the reasons;
* ``tmem`` (the catalog's Tensor Memory map layouts, ``kind = "tmem"``, and the tcgen05.cp source block, also
  from ``maps``): tcgen05.mma / tcgen05.st / tcgen05.cp runs on sm_100a read back with tcgen05.ld (``tmem_kind``).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from ..witnesses import as_witness
from ..layout.fragment_maps import FragmentKind
from ..layout.model import Codomain, Domain, Layout, cell_at
from . import blockscale, catalog_probes as cp, direct, explain, observe, probes as mma_probes, simdevice, tcgen05_scale
from . import smem_kind, smem_probes, tmem_kind, tmem_readback, wgmma, wmma
from .grouping import InstructionGroup, instruction_groups
from .observe import Observation
from ..results.hardware import HardwareResult
from .simdevice import Deviation

CATALOG_FORMAT = "ptx-layout-verify/catalog-probe/1"


@dataclass(frozen=True)
class Probe:
    """One probe: one exact PTX instruction in a kernel, and the concrete layouts (doc and corrected; a
    family: one instance) its observation is compared with."""

    id: str
    kind: str
    arch: str  # the minimal target (sm_XX, or sm_XXa for arch-specific instructions)
    text: str  # the PTX instruction
    tested: tuple[Layout, ...] = field(compare=False)
    payload: Any = field(compare=False)  # the kind's own description (probes.Instruction, CatalogProbe)
    negative: bool = False  # the doc's own register count where a spec records a count erratum: ptxas rejects it
    binding: tuple[tuple[str, int], ...] = ()  # a map-layout family's probed member (shared: T=8, ...)

    @property
    def tags(self) -> tuple[str, ...]:
        """The tested layout ids, a family instance with its binding (``...R.b16@NUM=2``, ``...@T=8``)."""
        out = []
        for x in self.tested:
            bound = getattr(x, "params_bound", ()) or self.binding
            out.append(x.id + ("@" + ",".join(f"{k}={v}" for k, v in bound) if bound else ""))
        return tuple(out)

    def tests(self, lid: str) -> bool:
        return any(x.id == lid for x in self.tested)


@dataclass(frozen=True)
class Kind:
    name: str
    families: tuple[str, ...]
    build: Callable[[InstructionGroup, Sequence[Layout], bool], tuple[list[Probe], list[str]]]
    program: Callable[[Probe], str]
    simulate: Callable[[Probe, Deviation | None], dict[str, Any]]
    judge: Callable[[Probe, Observation], list[HardwareResult]]
    record: Callable[[Probe, Observation, str], dict[str, Any]]


# ----------------------------------------------------------------------------- relational kinds (mma, wgmma)

def _relational(ins: mma_probes.Instruction, kind: str) -> Probe:
    return Probe(ins.id, kind, ins.arch, ins.text, ins.layouts, ins)


def _build_mma(group: InstructionGroup, _all: Sequence[Layout], _neg: bool) -> tuple[list[Probe], list[str]]:
    inss, errors = mma_probes._group(group.layouts)
    return [_relational(i, "mma") for i in inss], errors


def _build_wgmma(group: InstructionGroup, _all: Sequence[Layout], _neg: bool) -> tuple[list[Probe], list[str]]:
    inss, errors = wgmma.build(group)
    return [_relational(i, "wgmma") for i in inss], errors


def _simulate_relational(p: Probe, dev: Deviation | None) -> dict[str, Any]:
    ins = p.payload
    model = simdevice.model_from_instruction(ins)
    if dev is not None:
        model = simdevice.deviate(model, ins, dev)
    return simdevice.run(ins, model)


def _judge_relational(p: Probe, obs: Observation) -> list[HardwareResult]:
    return explain.compare(p.payload, obs)


def _record_relational(p: Probe, obs: Observation, sha: str) -> dict[str, Any]:
    ins = p.payload
    return observe.observation_json(ins, obs, observe.relations(ins, obs), sha, {"kind": p.kind})


# ----------------------------------------------------------------------------- direct kinds

def _direct(c: cp.CatalogProbe) -> Probe:
    return Probe(c.id, c.kind if c.kind in ("wmma", "block_scale", "tcgen05_mma") else "movement", c.arch, c.text,
                 c.tested, c, c.negative)


def _build_movement(group: InstructionGroup, _all: Sequence[Layout], neg: bool) -> tuple[list[Probe], list[str]]:
    return [_direct(c) for c in cp.movement_probes(group, neg)], []


def _build_wmma(group: InstructionGroup, _all: Sequence[Layout], neg: bool) -> tuple[list[Probe], list[str]]:
    frags: dict[str, Layout] = {}
    for x in (y for y in group.operand("A") + group.operand("B") + group.operand("C")):
        for t in x.types:
            frags[x.operand + ":" + t] = x
    out = []
    for key in sorted(frags):
        op, atype = key.split(":")
        if op != "A" or ("B:" + atype) not in frags:
            continue
        ctypes = ["f32", "f16"] if atype == "f16" else ["f64"] if atype == "f64" else ["s32"] if atype in (
            "u8", "s8", "u4", "s4", "b1") else ["f32"]
        for ct in ctypes:
            if "C:" + ct not in frags:
                continue
            chosen = {"A": frags[key], "B": frags["B:" + atype], "C": frags["C:" + ct]}
            tested = group.tested(*chosen.values())
            out.append(_direct(wmma.build(str(group.shape), chosen, atype, ct, tested)))
            doc = next((y for y in group.layouts if y.id == chosen["C"].corrects), None)
            if neg and doc is not None:
                out.append(_direct(wmma.build(str(group.shape), chosen, atype, ct, (doc,), doc_c=doc)))
    return out, []


def _build_block_scale(group: InstructionGroup, all_layouts: Sequence[Layout], _neg: bool) -> tuple[list[Probe], list[str]]:
    try:
        return [_direct(c) for c in blockscale.build(group, all_layouts)], []
    except mma_probes.ProbeError as e:
        return [], [f"{x.id}: {e}" for x in group.layouts]


def _build_tcgen05_mma(group: InstructionGroup, _all: Sequence[Layout], _neg: bool) -> tuple[list[Probe], list[str]]:
    return [_direct(c) for c in tcgen05_scale.build(group)], []


def _main_layout(p: Probe) -> Layout:
    """The layout a data-movement probe's registers follow: the corrected one where the spec has one."""
    return next((x for x in p.tested if x.corrected), p.tested[0])


@dataclass(frozen=True)
class _BentMap(FragmentKind):
    """A deviating device's cells (for the data-movement simulators: they read one point at a time)."""

    point: Callable[[int, int], Any]
    notation: str = "simulated deviation"
    domain: Domain | None = None
    codomain: Codomain | None = None

    def _point(self, thread: int, i: int) -> tuple[int, int] | None:
        return self.point(thread, i)


def _cells(lay: Layout) -> Callable[[int, int], Any]:
    return lambda t, i: cell_at(lay, t, i)


def _bend(lay: Layout, dev: Deviation | None) -> Any:
    if dev is None or dev.layout != lay.id:
        return lay
    return dataclasses.replace(lay, map=_BentMap(dev.bend(_cells(lay))))


def _raw(p: Probe, words: list[int], dev: Deviation | None) -> dict[str, Any]:
    name = simdevice.SIMULATED_NAME + (f" ({dev.name})" if dev else " (follows the specs)")
    return {"format": CATALOG_FORMAT, "id": p.id, "instruction": p.text, "simulated": True,
            "device": {"name": name, "compute_capability": None, "driver_version": None, "runtime_version": None},
            "out": words}


def _simulate_movement(p: Probe, dev: Deviation | None) -> dict[str, Any]:
    c: cp.CatalogProbe = p.payload
    if c.kind == "movmatrix":
        a = next(x for x in p.tested if x.operand == "A")
        d = next(x for x in p.tested if x.operand == "D")
        return _raw(p, cp.simulate(c, _bend(d, dev), _bend(a, dev)), dev)
    return _raw(p, cp.simulate(c, _bend(_main_layout(p), dev)), dev)


def _simulate_wmma(p: Probe, dev: Deviation | None) -> dict[str, Any]:
    maps = {}
    if dev is not None:
        for fr in wmma.fragments(p.payload):
            if fr.layout == dev.layout:
                maps[fr.operand] = dev.bend(wmma.stand_in(fr))
        if not maps:
            raise ValueError(f"{dev.layout} is not a fragment of {p.id}")
    return _raw(p, wmma.simulate(p.payload, maps), dev)


def _simulate_block_scale(p: Probe, dev: Deviation | None) -> dict[str, Any]:
    lay = p.tested[0]
    point = dev.bend(_cells(lay)) if dev is not None and dev.layout == lay.id else None
    return _raw(p, blockscale.simulate(p.payload, point), dev)


def _simulate_tcgen05_mma(p: Probe, dev: Deviation | None) -> dict[str, Any]:
    lay = p.tested[0]
    point = dev.bend(_cells(lay)) if dev is not None and dev.layout == lay.id else None
    return _raw(p, tcgen05_scale.simulate(p.payload, point), dev)


def _record_direct(p: Probe, obs: Observation, sha: str) -> dict[str, Any]:
    doc = _record_direct_head(p, obs, sha)
    doc["decoded"] = direct.decoded_json(p.payload, obs)
    return doc


def _record_direct_head(p: Probe, obs: Observation, sha: str) -> dict[str, Any]:
    d = dict(obs.device)
    return {"format": observe.OBS_FORMAT, "kind": p.kind, "simulated": obs.simulated, "instruction": p.id,
            "ptx": p.text, "arch": p.arch, "layouts": list(p.tags),
            "gpu": {"name": d.get("name"), "compute_capability": d.get("compute_capability"),
                    "driver_version": d.get("driver_version"), "runtime_version": d.get("runtime_version")},
            "probe_sha256": sha, "out": list(obs.out)}


def _program_direct(p: Probe) -> str:
    return cp.probe_program(p.payload)


# ----------------------------------------------------------------------------- shared-memory map layouts

def _build_shared(_group: InstructionGroup, _all: Sequence[Layout], _neg: bool) -> tuple[list[Probe], list[str]]:
    return [], []  # no instruction group holds map layouts: ``shared_probes`` builds them


def shared_probes(layouts: Sequence[Layout], maps: Sequence[Any]) -> tuple[list[Probe], list[str]]:
    """The probes of the shared-memory map layouts among ``maps`` (the ldmatrix and wgmma spec layouts they
    read through are taken from ``layouts``), and why each other map layout has none (``[id] reason``)."""
    if not maps:
        return [], []
    movement = next((x for x in layouts if x.id == "ldmatrix.m8n8.R.b16"), None)
    d = next((x for x in layouts if x.id == "wgmma.m64nNk16.D.f32"), None)
    out: list[Probe] = []
    errors: list[str] = []
    for m in maps:
        if tmem_kind.takes(m):
            continue  # the tmem kind's
        why = smem_kind.why_not(m)
        if why is None and movement is None:
            why = "the ldmatrix.m8n8.R.b16 spec the probes read through is not loaded"
        if why is not None:
            errors.append(f"[{m.id}] {why}")
            continue
        try:
            found, notes = smem_kind.build(m, movement.instance(NUM=4),  # type: ignore[union-attr]
                                           d.instance(N=16) if d is not None else None)
        except smem_kind.NotProbed as e:
            errors.append(f"[{m.id}] {e}")
            continue
        errors += [f"[{m.id}] {n}" for n in notes]
        out += [Probe(sh.probe.id, "shared", sh.probe.arch, sh.probe.text, (m,), sh, binding=sh.member)
                for sh in found]
    return out, errors


def _simulate_shared(p: Probe, dev: Deviation | None) -> dict[str, Any]:
    sh: smem_kind.ShProbe = p.payload
    if dev is not None and dev.layout != sh.layout_id:
        raise ValueError(f"{dev.layout} is not read by {p.id}")
    return _raw(p, smem_kind.simulate(sh, dev.source if dev is not None else None), dev)


def _judge_shared(p: Probe, obs: Observation) -> list[HardwareResult]:
    sh: smem_kind.ShProbe = p.payload
    if len(obs.out) != sh.probe.threads * sh.probe.out_words:
        raise ValueError(f"{len(obs.out)} output words, the probe writes {sh.probe.threads * sh.probe.out_words}")
    viol = smem_kind.violations(sh, obs.out)
    sim = "SIMULATED: " if obs.simulated else ""
    lay = p.tested[0]
    if viol:
        listed = tuple(v[0] for v in viol[:observe.MAX_LISTED])
        more = f" (and {len(viol) - observe.MAX_LISTED} more)" if len(viol) > observe.MAX_LISTED else ""
        return [HardwareResult(lay.id, p.id, "contradicted", f"{sim}{sh.how} on {obs.gpu}: {listed[0]}{more}",
                               obs.gpu, obs.simulated, listed, as_witness(viol[0][1]), obs.path)]
    return [HardwareResult(lay.id, p.id, "confirmed", f"{sim}{sh.how} on {obs.gpu}: every element read is the "
                           "cell the layout puts there", obs.gpu, obs.simulated, (), None, obs.path)]


def _record_shared(p: Probe, obs: Observation, sha: str) -> dict[str, Any]:
    doc = _record_direct_head(p, obs, sha)
    doc["decoded"] = {"smem": smem_kind.decoded(p.payload, obs.out)}
    return doc


# ----------------------------------------------------------------------------- Tensor Memory map layouts

def tmem_probes(maps: Sequence[Any]) -> tuple[list[Probe], list[str]]:
    """The probes of the Tensor Memory map layouts among ``maps`` (a doc layout with its correction; the
    tcgen05.cp copy layouts with their source block), and why each other one has none (``[id] reason``)."""
    mine = [m for m in maps if tmem_kind.takes(m)]
    source = next((m for m in mine if m.doc_id == tmem_kind.CP_SOURCE), None)
    groups: dict[str, list[Any]] = {}
    for m in mine:
        key = "tcgen05.cp" if m.doc_id in (tmem_kind.CP_COPY, tmem_kind.CP_SOURCE) else m.doc_id
        groups.setdefault(key, []).append(m)
    out: list[Probe] = []
    errors: list[str] = []
    for _key, members in sorted(groups.items()):
        tested = sorted(members, key=lambda x: (x.kind != "tmem", not x.corrected, x.id))  # the main one first
        ids = "[" + ", ".join(x.id for x in tested) + "] "
        try:
            found = tmem_kind.build(tested, source, mine)
        except tmem_kind.NotProbed as e:
            errors.append(f"{ids}{e}")
            continue
        out += [Probe(t.id, "tmem", tmem_kind.ARCH, t.text, tuple(tested), t, binding=t.member) for t in found]
    return out, errors


def _tmem_catalog_probe(p: Probe) -> cp.CatalogProbe:
    t: tmem_kind.TmProbe = p.payload
    return cp.make_probe(t.id, tmem_kind.ARCH, t.text, p.tags, tmem_kind.source(t), "tmem", threads=128,
                         out_words=t.plan.out_words, in_words=len(t.input), binding=t.member,
                         meta={"input": t.input, "cluster": t.plan.ctas})


def _simulate_tmem(p: Probe, dev: Deviation | None) -> dict[str, Any]:
    if dev is not None and not p.tests(dev.layout):
        raise ValueError(f"{dev.layout} is not read by {p.id}")
    return _raw(p, tmem_readback.simulate(p.payload, dev.source if dev is not None else None), dev)


def _judge_tmem(p: Probe, obs: Observation) -> list[HardwareResult]:
    t: tmem_kind.TmProbe = p.payload
    got = tmem_readback.decode(t, obs.out)
    sim = "SIMULATED: " if obs.simulated else ""
    expected = dict(t.expected)
    out = []
    alt = tmem_readback.remark(t, got)  # another statement of the layout (Layout C: CuTe's), compared too
    for lay in p.tested:
        viol = tmem_readback.violations(t, lay.id, got)
        exp = expected.get(lay.id, "confirmed")
        if viol:
            listed = tuple(v[0] for v in viol[:observe.MAX_LISTED])
            more = f" (and {len(viol) - observe.MAX_LISTED} more)" if len(viol) > observe.MAX_LISTED else ""
            out.append(HardwareResult(lay.id, p.id, "contradicted",
                                      f"{sim}{t.how} on {obs.gpu}: {listed[0]}{more}{alt}",
                                      obs.gpu, obs.simulated, listed, as_witness(viol[0][1]), obs.path, expected=exp))
        else:
            out.append(HardwareResult(lay.id, p.id, "confirmed", f"{sim}{t.how} on {obs.gpu}: every cell read back is "
                                      f"the one the layout gives{alt}", obs.gpu, obs.simulated, (), None, obs.path,
                                      expected=exp))
    return out


def _record_tmem(p: Probe, obs: Observation, sha: str) -> dict[str, Any]:
    doc = _record_direct_head(p, obs, sha)
    doc["decoded"] = {"tmem": tmem_readback.decoded(p.payload, obs.out)}
    return doc


KINDS: tuple[Kind, ...] = (
    Kind("mma", ("mma", "mma.sp"), _build_mma, lambda p: mma_probes.probe_source(p.payload),
         _simulate_relational, _judge_relational, _record_relational),
    Kind("wgmma", ("wgmma", "wgmma.sp"), _build_wgmma, lambda p: wgmma.probe_source(p.payload),
         _simulate_relational, _judge_relational, _record_relational),
    Kind("movement", ("ldmatrix", "stmatrix", "movmatrix", "tcgen05.ld", "tcgen05.st"), _build_movement,
         _program_direct, _simulate_movement, lambda p, o: direct.judge_movement(p.payload, o), _record_direct),
    Kind("wmma", ("wmma",), _build_wmma, _program_direct, _simulate_wmma,
         lambda p, o: direct.judge_wmma(p.payload, o), _record_direct),
    Kind("block_scale", ("mma.block_scale",), _build_block_scale, _program_direct, _simulate_block_scale,
         lambda p, o: direct.judge_block_scale(p.payload, o), _record_direct),
    Kind("tcgen05_mma", ("tcgen05.mma",), _build_tcgen05_mma, _program_direct, _simulate_tcgen05_mma,
         lambda p, o: direct.judge_tcgen05_scale(p.payload, o), _record_direct),
    Kind("shared", (), _build_shared, lambda p: smem_probes.source(p.payload.probe), _simulate_shared,
         _judge_shared, _record_shared),
    Kind("tmem", (), _build_shared, lambda p: cp.probe_program(_tmem_catalog_probe(p)), _simulate_tmem,
         _judge_tmem, _record_tmem),
)
BY_NAME = {k.name: k for k in KINDS}
BY_FAMILY = {f: k for k in KINDS for f in k.families}


def kind_of(p: Probe) -> Kind:
    return BY_NAME[p.kind]


def all_probes(layouts: Iterable[Layout], negatives: bool = False,
               maps: Sequence[Any] = ()) -> tuple[list[Probe], list[str]]:
    """Every probe of ``layouts`` (with ``negatives``: also the doc's own rejected register counts) and of
    the map layouts ``maps`` (the shared-memory ones), in (architecture, id) order, and why some layouts
    could not be probed (each reason prefixed by the ids of its instruction's layouts, ``[id, id, ...]
    reason``)."""
    lays = list(layouts)
    out: dict[str, Probe] = {}
    shared, errors = shared_probes(lays, maps)
    tmem, why_tmem = tmem_probes(maps)
    errors += why_tmem
    out.update((p.id, p) for p in shared + tmem)
    for group in instruction_groups(lays):
        kind = BY_FAMILY.get(group.family)
        ids = "[" + ", ".join(x.id for x in group.layouts) + "] "
        if kind is None:
            errors.append(f"{ids}no probe kind for instruction {group.family!r}")
            continue
        found, why = kind.build(group, lays, negatives)
        errors += [ids + w for w in why]
        for p in found:
            if p.id in out:  # two C layouts of one spec for one accumulator: one probe tests both
                old = out[p.id]
                merged = tuple(sorted({x.id: x for x in old.tested + p.tested}.values(), key=lambda x: x.id))
                out[p.id] = dataclasses.replace(old, tested=merged)
            else:
                out[p.id] = p
    return sorted(out.values(), key=lambda p: (p.arch, p.id)), errors


def probes_for(layouts: Iterable[Layout], ids: Sequence[str], maps: Sequence[Any] = ()) -> list[Probe]:
    """The probes that test the layouts named by ``ids`` (fragment layouts first, then the map layouts
    ``maps``; every id must name one layout that some probe tests: none is dropped silently; ``KeyError``
    says why not).  No ids: every probe."""
    lays = list(layouts)
    if not ids:
        return all_probes(lays, maps=maps)[0]
    named: list[Any] = []
    for ident in ids:
        try:
            named.append(mma_probes.resolve_id(lays, ident))
        except KeyError as e:
            if not maps or not str(e.args[0]).startswith("no layout"):
                raise
            named.append(mma_probes.resolve_id(list(maps), ident))
    wanted = [m for m in maps if any(m is x for x in named)]  # only the named map layouts' probes are built
    wanted += [m for m in maps if not any(m is x for x in wanted) and _companion(m, wanted)]
    found, errors = all_probes(lays, maps=wanted)
    out: dict[str, Probe] = {}
    for lay in named:
        mine = [p for p in found if p.tests(lay.id)]
        if not mine:
            why = next((e.split("] ", 1)[1] for e in errors if lay.id in e.split("] ", 1)[0][1:].split(", ")), "")
            raise KeyError(f"{lay.id} cannot be probed" + (f": {why}" if why else
                                                             " (no probe of its instruction includes it)"))
        out.update((p.id, p) for p in mine)
    return sorted(out.values(), key=lambda p: (p.arch, p.id))


def probes_at(probes: Sequence[Probe], params: Mapping[str, int] | None) -> list[Probe]:
    """The probes of the members ``params`` names (``--param``, ``verify.layout.params``): a name binds every
    probed family that has it, a probe of a layout without it stays; a name or value no probe has is a
    ``FamilyError`` naming the valid ones (the values the probes run)."""
    from ..layout.family import Param
    from ..layout.params import Side, check
    if not params:
        return list(probes)

    def bound(p: Probe) -> dict[str, int]:
        out: dict[str, int] = {}
        for x in p.tested:
            out.update(getattr(x, "params_bound", ()) or p.binding)
        return out

    values: dict[str, set[int]] = {}
    for p in probes:
        for k, v in bound(p).items():
            values.setdefault(k, set()).add(v)
    check(params, [Side("the probed layouts", tuple(Param(k, tuple(sorted(v))) for k, v in values.items()))])
    return [p for p in probes if all(bound(p).get(k, v) == v for k, v in params.items())]


def _companion(m: Any, named: Sequence[Any]) -> bool:
    """Whether a probe of a named map layout tests ``m`` too: its doc layout or correction; for tcgen05.cp, the
    copy layout and the source block it copies from."""
    return any(m.doc_id == x.doc_id or (m.instruction == x.instruction == "tcgen05.cp") for x in named)


def expected(p: Probe, lay: Any) -> str:
    """What a run on hardware that does what the specs say gives for ``lay`` (a tested layout of ``p``)."""
    if p.kind == "tmem":
        return dict(p.payload.expected).get(lay.id, "confirmed")
    if not hasattr(lay, "registers"):  # a map layout of the shared kind: no erratum a probe tells apart
        return "confirmed"
    return explain.expected_status(lay, p.tested)


def simulate(p: Probe, deviation: Deviation | None = None) -> dict[str, Any]:
    """What a SIMULATED device that does what the specs say (or deviates from one layout) prints for ``p``."""
    return kind_of(p).simulate(p, deviation)


def judge(p: Probe, obs: Observation) -> list[HardwareResult]:
    return kind_of(p).judge(p, obs)


def program(p: Probe) -> str:
    return kind_of(p).program(p)


def record(p: Probe, obs: Observation, sha: str) -> dict[str, Any]:
    return kind_of(p).record(p, obs, sha)


def check_observations(layouts: Iterable[Layout], obs_dir: str | Path, maps: Sequence[Any] = ()) -> list[HardwareResult]:
    """Compare every observation file in ``obs_dir`` with the layouts its probe tests (every kind).

    Observation files of probes not among ``layouts``'s are ignored; a file that cannot be read or does not
    fit its probe is bad input (``ObservationError``), and so is a directory with no observation file."""
    loaded = [(f, observe.load_observation(f)) for f in observe.observation_files(obs_dir)]
    named = {o.instruction for _f, o in loaded}
    wanted = [m for m in maps if f"smem.ldmatrix.{m.id}" in named or f"smem.wgmma.{m.id}" in named]
    if any(n.startswith("tmem.") for n in named):
        wanted += [m for m in maps if tmem_kind.takes(m)]
    by_id = {p.id: p for p in all_probes(layouts, maps=wanted)[0]}
    out: list[HardwareResult] = []
    for f, obs in loaded:
        p = by_id.get(obs.instruction)
        if p is None:
            continue
        if p.kind in ("mma", "wgmma") and obs.out:
            raise observe.ObservationError(str(f), f"{p.id} is an MMA probe: its observation has records, not out")
        if p.kind not in ("mma", "wgmma") and not obs.out:
            raise observe.ObservationError(str(f), f"{p.id} writes its registers out: its observation lacks 'out'")
        try:
            out.extend(judge(p, obs))
        except (IndexError, KeyError, ValueError) as e:
            raise observe.ObservationError(str(f), f"does not fit probe {p.id}: {e}") from None
    return out


def build_note(found: Sequence[Probe]) -> str:
    """README for a directory of emitted probes."""
    lines = ["# Layout probes (generated by `ptx-verify probe`)", "",
             "Each `.cu` file runs one PTX instruction on a GPU and prints its raw output as JSON.",
             "The simplest path is `ptx-verify confirm --device cuda`, which builds every probe the GPU can run",
             "in one translation unit, runs them, records `reports/observations/<probe>.<gpu>.json` and",
             "compares. By hand (`sm_XXa`: only that very GPU runs it):", "", "```sh"]
    for p in found:
        code = p.arch
        lines.append(f"nvcc -gencode arch={code.replace('sm_', 'compute_')},code={code} -o {p.id} {p.id}.cu && "
                     f"./{p.id} > {p.id}.raw.json")
    lines += ["```", "",
              "The target is the minimal one; a newer GPU builds for its own (an `sm_XXa` probe runs on that GPU "
              "only).", "", "| probe | kind | PTX | min arch | layouts tested |", "| --- | --- | --- | --- | --- |"]
    for p in found:
        lines.append(f"| `{p.id}` | {p.kind} | `{p.text}` | {p.arch} | {', '.join(p.tags)} |")
    return "\n".join(lines) + "\n"
