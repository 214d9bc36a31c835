"""Results of the probes that observe a map directly: data movement, wmma, block scale.

Their raw output decodes to (lane, i) -> cell with no reconstruction (the codes name their own cells:
``catalog_probes``, ``wmma``, ``blockscale``); here each tested layout is compared with it and becomes a
``HardwareResult``, in the same words and with the same expectations (known errata) as the mma results.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from ..witnesses import as_witness
from ..layout.model import Layout
from . import blockscale, catalog_probes as cp, tcgen05_scale, wmma
from .explain import expected_status
from .observe import MAX_LISTED, Observation
from ..results.hardware import HardwareResult

Elem = tuple[int, int]


def _results(p: cp.CatalogProbe, obs: Observation, found: Sequence[tuple[Layout, list[tuple[str, dict[str, Any]]]]],
             ok: Mapping[str, tuple[str, str]] | None = None, texts: Mapping[str, str] | None = None
             ) -> list[HardwareResult]:
    """One result per layout: contradicted with its first violations, else ``ok[id]`` = (status, message)
    (default: confirmed, every observed element agrees); ``texts[id]``: the instruction a layout is observed
    through, where it is not the probe's own."""
    sim = "SIMULATED: " if obs.simulated else ""
    out = []
    for lay, viol in found:
        exp = expected_status(lay, p.tested)
        text = (texts or {}).get(lay.id, p.text)
        if viol:
            listed = [v[0] for v in viol[:MAX_LISTED]]
            more = f" (and {len(viol) - MAX_LISTED} more)" if len(viol) > MAX_LISTED else ""
            out.append(HardwareResult(lay.id, p.id, "contradicted", f"{sim}{text} on {obs.gpu}: {listed[0]}{more}",
                                      obs.gpu, obs.simulated, tuple(listed), as_witness(viol[0][1]), obs.path, expected=exp))
        else:
            status, msg = (ok or {}).get(lay.id, ("confirmed", "every observed element is where the spec puts it"))
            out.append(HardwareResult(lay.id, p.id, status, f"{sim}{text} on {obs.gpu}: {msg}", obs.gpu,
                                      obs.simulated, (), None, obs.path, expected=exp))
    return out


def map_violations(lay: Layout, observed: Mapping[Elem, Any], what: str = "cell") -> list[tuple[str, dict[str, Any]]]:
    """Every (lane, i) whose observed cell is not the spec's, in the doc's words."""
    return [(f"lane {lane} element {lay.element_name(i)}: the spec puts it at {what} {want}, the hardware at {got}",
             {"relation": "map", "lane": lane, "i": i, "element": lay.element_name(i),
              "spec": None if want is None else list(want),
              "observed": got if got is None or isinstance(got, str) else list(got)})
            for lane, i, want, got in cp.differences(lay, observed)]


def _registers(lay: Layout, regs: int) -> list[tuple[str, dict[str, Any]]]:
    if lay.regs.count == regs:
        return []
    return [(f"the instruction takes {regs} register(s); the spec says {lay.regs.count}",
             {"relation": "registers", "hardware": regs, "spec": lay.regs.count})]


def judge_movement(p: cp.CatalogProbe, obs: Observation) -> list[HardwareResult]:
    """ldmatrix, stmatrix, movmatrix, tcgen05.ld/st: the decoded map against each tested layout."""
    by_id = {x.id: x for x in p.tested}
    observed = cp.decode(p, obs.out, by_id)
    found = []
    if p.kind == "movmatrix":  # d = transpose(a): A and D are observed together
        d = next(x for x in p.tested if x.operand == "D")
        viol = map_violations(d, observed)
        for lay in p.tested:
            found.append((lay, [(f"{m} (d = transpose(a), read through the A layout {p.layouts[0]})", c)
                                for m, c in viol]))
        ok = {x.id: ("confirmed", "every element of d comes from the element of a the A and D layouts give it")
              for x in p.tested}
        return _results(p, obs, found, ok)
    regs = p.meta.get("regs", 1)
    for lay in p.tested:
        found.append((lay, _registers(lay, regs) or map_violations(lay, observed)))
    return _results(p, obs, found)


def judge_wmma(p: cp.CatalogProbe, obs: Observation) -> list[HardwareResult]:
    """wmma: the map is reported as observed; what the doc states (registers, and the counts' replication)
    is compared."""
    observed = wmma.decode(p, obs.out)
    frs = {fr.operand: fr for fr in wmma.fragments(p)}
    found, ok = [], {}
    stand_in = " (a stand-in: the SIMULATED device has no doc map to follow)" if obs.simulated else ""
    arch = wmma.reference_arch(obs.device)  # a device wmmae has maps for: compare (reference, not the doc)
    for lay in p.tested:
        fr = frs[lay.operand]
        viol = [(m, {"relation": "wmma", "message": m}) for m in wmma.violations(fr, lay, observed[lay.operand])]
        found.append((lay, viol))
        ref = wmma.compare_reference(fr, lay, observed[lay.operand], arch) if arch is not None else None
        ok[lay.id] = ("observed", f"the doc leaves this map unspecified; observed{stand_in}, each cell held "
                                  f"{lay.n_elements * 32 // fr.cells} time(s) as the counts imply: "
                                  f"{wmma.describe(lay, observed[lay.operand])}" + (f"; {ref}" if ref else ""))
    return _results(p, obs, found, ok, {x.id: frs[x.operand].load for x in p.tested})


def judge_block_scale(p: cp.CatalogProbe, obs: Observation) -> list[HardwareResult]:
    """mma block scale: which row (column) and k block each scale byte scales, against the SFA/SFB layout."""
    observed = blockscale.decode(p, obs.out)
    st = blockscale.setup_of(p)
    through = f"rows and columns through {st.c.id}, k blocks through {st.a.id if st.side == 'A' else st.b.id}"
    found = []
    for lay in p.tested:
        viol = [(m, {"relation": "scale", "message": m}) for m in blockscale.compare(lay, observed)]
        found.append((lay, viol))
    ok = {x.id: ("confirmed", f"every scale byte scales the cell the spec gives it ({through})") for x in p.tested}
    return _results(p, obs, found, ok)


def judge_tcgen05_scale(p: cp.CatalogProbe, obs: Observation) -> list[HardwareResult]:
    """tcgen05.mma scale factor A ID: which byte of the TMEM word scales which k block."""
    observed = tcgen05_scale.decode(p, obs.out)
    found = [(lay, [(m, {"relation": "scale", "message": m}) for m in tcgen05_scale.compare(lay, observed)])
             for lay in p.tested]
    ok = {x.id: ("confirmed", "each byte of the scale-factor word scales the k block the spec gives it "
                              "(k blocks through the probe's own K-major shared-memory tile)") for x in p.tested}
    return _results(p, obs, found, ok)


def decoded_json(p: cp.CatalogProbe, obs: Observation) -> dict[str, Any]:
    """The decoded map for the observation file: [[lane, i, row, col] ...] per operand (null: no cell)."""
    if p.kind == "wmma":
        maps: Mapping[str, Mapping[Elem, Any]] = wmma.decode(p, obs.out)
    elif p.kind == "block_scale":
        maps = {p.tested[0].operand: blockscale.decode(p, obs.out)}
    elif p.kind == "tcgen05_mma":
        maps = {p.tested[0].operand: tcgen05_scale.decode(p, obs.out)}
    else:
        maps = {"R": cp.decode(p, obs.out, {x.id: x for x in p.tested})}
    return {op: [[lane, i, *(list(c) if isinstance(c, tuple) else [c])] for (lane, i), c in sorted(m.items())]
            for op, m in sorted(maps.items())}
