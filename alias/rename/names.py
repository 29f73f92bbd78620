"""Same-length random names for consistent identifier renaming (CIR).

A new name keeps the length of the old one and the case of its first letter
(uppercase stays uppercase, anything else becomes a lowercase letter); every other
character is a random lowercase letter, e.g. ``TypeOK -> Octvcq``.  A new name is never
a TLA+ keyword, never an operator or module name of the standard modules and never a
member of the caller's ``taken`` set.

Determinism: the random stream for one old name is seeded by the string
``f"{seed}:{salt}:{old}"`` (string seeding of :class:`random.Random` is stable across
runs and platforms), so the new name of ``old`` depends only on the seed, the salt, the
old name and on which candidates ``taken`` excludes.
"""

from __future__ import annotations

import random
import string

from alias.tla.syntax import STANDARD_MODULES


class RenameError(Exception):
    """Renaming is impossible (e.g. no free same-length name) or the input is unusable."""


#: Reserved words of TLA+ and of the proof language, plus built-in constants.
TLA_KEYWORDS = frozenset(
    """
    ACTION ASSUME ASSUMPTION AXIOM BOOLEAN BY CASE CHOOSE CONSTANT CONSTANTS COROLLARY DEF
    DEFINE DEFS DOMAIN ELSE ENABLED EXCEPT EXTENDS FALSE HAVE HIDE IF IN INSTANCE LAMBDA
    LEMMA LET LOCAL MODULE NEW OBVIOUS OMITTED ONLY OTHER PICK PROOF PROPOSITION PROVE QED
    RECURSIVE SF_ STATE STRING SUBSET SUFFICES TAKE TEMPORAL THEN THEOREM TRUE UNCHANGED
    UNION USE VARIABLE VARIABLES WF_ WITH WITNESS
    """.split()
)

#: Operators and constants that the standard modules (and TLAPS) define.
STANDARD_OPERATORS = frozenset(
    """
    Nat Int Real Infinity Seq Len Head Tail Append SubSeq SelectSeq Cardinality IsFiniteSet
    IsABag BagToSet SetToBag BagIn EmptyBag CopiesIn BagCup BagDiff BagUnion SubBag BagOfAll
    BagCardinality Print PrintT Assert JavaTime TLCGet TLCSet Permutations SortSeq
    RandomElement Any ToString TLCEval RandomSubset RandomSetOfSubsets TestRandomSetOfSubsets
    RandomSubsetSet RTBound RTnow now Sum AssertEq AssertError Trace TLCModelValue TLCCache
    PickSuccessor TLCDefer TLCNoOp TLCFP CounterExample ToTrace TLCGetAndSet ToJson
    ToJsonArray ToJsonObject JsonSerialize JsonDeserialize ndJsonSerialize
    ndJsonDeserialize _TETrace _TEPosition _TETraceLength
    SMT CVC3 CVC4 Yices veriT Z3 Spass SimpleArithmetic Zenon SlowZenon SlowerZenon
    VerySlowZenon SlowestZenon Isa Auto Force Blast SimplifyAndSolve Simplification
    AutoBlast LS4 PTL PropositionalTemporalLogic AllProvers AllProversT AllSMT AllSMTT
    AllZenon AllZenonT AllIsa AllIsaT SetExtensionality NoSetContainsEverything
    IsaWithSetExtensionality ExpandENABLED ExpandCdot AutoUSE Lambdify ENABLEDaxioms
    ENABLEDrewrites ENABLEDrules LevelComparison Trivial
    """.split()
)

#: Everything a new name must never be.
RESERVED = TLA_KEYWORDS | STANDARD_OPERATORS | STANDARD_MODULES

_LOWER = string.ascii_lowercase
_UPPER = string.ascii_uppercase
_MAX_TRIES = 1000


def _ok(name: str, taken: set[str] | frozenset[str]) -> bool:
    return (
        name not in taken
        and name not in RESERVED
        and not name.startswith(("WF_", "SF_"))
    )


class NameGenerator:
    """Deterministic source of same-length random names; see the module docstring."""

    def __init__(self, seed: int | str, salt: str = ""):
        self.seed = seed
        self.salt = salt

    def _rng(self, old: str) -> random.Random:
        return random.Random(f"{self.seed}:{self.salt}:{old}")

    def new_name(self, old: str, taken: set[str] | frozenset[str]) -> str:
        """A new name for ``old``: same length, same first-letter case, not in ``taken``.

        Raises :class:`RenameError` if ``old`` is empty or no free name is found
        (only possible for very short names).
        """
        n = len(old)
        if n == 0:
            raise RenameError("cannot rename an empty name")
        upper = old[0].isupper()
        if n == 1:
            first = _UPPER if upper else _LOWER
            other = _LOWER if upper else _UPPER
            for letters in (first, other):
                free = [c for c in letters if _ok(c, taken)]
                if free:
                    return self._rng(old).choice(free)
            raise RenameError(f"no free one-letter name for {old!r}")
        rng = self._rng(old)
        first = _UPPER if upper else _LOWER
        for _ in range(_MAX_TRIES):
            cand = rng.choice(first) + "".join(rng.choice(_LOWER) for _ in range(n - 1))
            if _ok(cand, taken):
                return cand
        if n == 2:  # small space: enumerate deterministically, then other case
            for f in (first, _LOWER if upper else _UPPER):
                for a in f:
                    for b in _LOWER:
                        if _ok(a + b, taken):
                            return a + b
        raise RenameError(f"no free name of length {n} for {old!r}")
