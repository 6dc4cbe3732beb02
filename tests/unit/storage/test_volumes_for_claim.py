"""StorageState.volumes_for_claim: the index VolumeBinding lists volumes from stays equal to
filtering cached_pvs after any sequence of volume writes, assumes and restores."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kplan.cluster.storage import StorageState
from kplan.model.storage import ClaimRef, PersistentVolume, PersistentVolumeClaim
from kplan.plugins.volumebinding import _candidates

NAMES = ["pv-a", "pv-b", "pv-c", "pv-d", "pv-e"]
CLAIMS = [PersistentVolumeClaim("ns", n, f"uid-{n}", storage_class_name=cls, access_modes=("ReadWriteOnce",),
                                request=1)
          for n in ("c1", "c2") for cls in ("fast", "slow")]


def volume(name: str, cls: str, claim: int | None, uid_matches: bool) -> PersistentVolume:
    ref = None
    if claim is not None:
        c = CLAIMS[claim]
        ref = ClaimRef(c.namespace, c.name, c.uid if uid_matches else "other-uid")
    return PersistentVolume(name, capacity=10, access_modes=("ReadWriteOnce",), storage_class_name=cls, claim_ref=ref,
                            phase="Bound" if ref is not None else "Available")


volumes = st.builds(volume, st.sampled_from(NAMES), st.sampled_from(["fast", "slow"]),
                    st.one_of(st.none(), st.integers(0, len(CLAIMS) - 1)), st.booleans())
writes = st.lists(st.tuples(st.sampled_from(["set", "assume", "restore", "delete"]), volumes), max_size=20)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.lists(volumes, max_size=4), writes, st.integers(0, 20))
def test_the_index_matches_a_scan_after_any_writes(initial: list[PersistentVolume],
                                                   ops: list[tuple[str, PersistentVolume]], ask_after: int) -> None:
    store = StorageState(volumes=initial)
    for i, (op, pv) in enumerate(ops):
        if i == ask_after:
            for claim in CLAIMS:
                store.volumes_for_claim(claim)   # an index read midway must catch up later
        if op == "set":
            store.pvs[pv.name] = pv
        elif op == "assume":
            store.assume_pv(pv)
        elif op == "restore":
            store.restore_pv(pv.name)
        else:
            store.pvs.pop(pv.name, None)
    for claim in CLAIMS:
        scanned = [pv for pv in store.cached_pvs(claim.class_name)
                   if pv.claim_ref is None or (pv.claim_ref.namespace, pv.claim_ref.name) == (claim.namespace, claim.name)]
        assert store.volumes_for_claim(claim) == scanned
        # what VolumeBinding decides from it is what it decides from every volume of the class
        assert _candidates(claim, store.volumes_for_claim(claim)) == _candidates(claim, store.cached_pvs(claim.class_name))
