"""CIR on small inline modules: names, scope analysis, rewrite, descriptions."""
from __future__ import annotations


import pytest

from alias.rename.cir import leftover_identifiers, rename_task
from alias.rename.corpus import with_comments_renamed
from alias.rename.descriptions import rename_description
from alias.rename.names import RESERVED, NameGenerator, RenameError
from alias.tla.syntax import parse

SYS = r"""---------------- MODULE Sys ----------------
EXTENDS Naturals, Sequences
CONSTANT N, Proc
VARIABLES x, y, msgs
vars == <<x, y, msgs>>
TypeOK == /\ x \in 0..N
          /\ y \in [Proc -> BOOLEAN]
Init == /\ x = 0
        /\ y = [p \in Proc |-> FALSE]
        /\ msgs = [val |-> 0, TypeOK |-> "TypeOK"]
Inc == /\ x < N
       /\ x' = x + 1
       /\ UNCHANGED <<y, msgs>>
Flip(p) == /\ y' = [y EXCEPT ![p] = ~@]
           /\ msgs' = [msgs EXCEPT !.val = msgs.val + 1, !.TypeOK = "x"]
           /\ UNCHANGED x
Next == Inc \/ \E p \in Proc : Flip(p)
Spec == Init /\ [][Next]_vars /\ WF_vars(Inc) /\ SF_vars(Next)
Live == <>(x = N) /\ []<><<Inc>>_vars
Step == [Inc]_<<x, y>>
Safe == \A q \in Proc : y[q] \in BOOLEAN
=============================================
"""

MC = r"""---- MODULE MCSys ----
EXTENDS Sys, TLC
CONSTANT a, b
MCProc == {a, b}
Bound == x <= 2
====
"""

INST = r"""---- MODULE Wrap ----
EXTENDS Naturals
CONSTANT Lim
VARIABLE cnt, flags, box
S == INSTANCE Sys WITH N <- Lim, Proc <- {1, 2}, x <- cnt, y <- flags, msgs <- box
RECURSIVE Total(_)
Total(s) == IF s = {} THEN 0
            ELSE LET e == CHOOSE z \in s : TRUE
                     Rest == s \ {e}
                 IN e + Total(Rest)
fact[n \in Nat] == IF n = 0 THEN 1 ELSE n * fact[n - 1]
Apply(F(_), v) == F(v)
WInit == S!Init /\ S!Flip(1) = S!Flip(2)
WSpec == S!Spec /\ Total({1}) = fact[1] /\ Apply(LAMBDA k : k + 1, 2) = 3
THEOREM WThm == WSpec => []S!TypeOK
====
"""

CFG = """CONSTANTS
    N = 3
    a = a
    b = b
    Proc <- MCProc
SPECIFICATION Spec
INVARIANT TypeOK Safe
CONSTRAINT Bound
"""


def _task(**kw):
    return rename_task({"Sys": SYS, "MCSys": MC, "Wrap": INST}, None, CFG, 7, "t", **kw)


# ------------------------------------------------------------------ names

def test_new_name_same_length_case_and_deterministic():
    g = NameGenerator(1, "s")
    n1 = g.new_name("TypeOK", set())
    assert len(n1) == 6 and n1[0].isupper() and n1[1:].islower()
    assert g.new_name("TypeOK", set()) == n1 == NameGenerator(1, "s").new_name("TypeOK", set())
    assert NameGenerator(2, "s").new_name("BarrierProperty", set()) != \
        NameGenerator(3, "s").new_name("BarrierProperty", set())
    low = g.new_name("x_1", set())
    assert len(low) == 3 and low.islower() and low.isalpha()


def test_new_name_avoids_taken_keywords_and_standard_operators():
    g = NameGenerator(0, "k")
    # all one-letter lowercase names taken: falls back to uppercase
    taken = set("abcdefghijklmnopqrstuvwxyz")
    n = g.new_name("q", taken)
    assert n.isupper() and len(n) == 1
    with pytest.raises(RenameError):
        g.new_name("q", taken | set("ABCDEFGHIJKLMNOPQRSTUVWXYZ"))
    # two-letter uppercase names: avoid keywords / standard operators / taken
    taken2 = set()
    for i in range(200):
        n = g.new_name(f"X{i % 10}"[:2], taken2)
        assert n not in RESERVED and not n.startswith(("WF_", "SF_"))
        assert n not in taken2
        taken2.add(n)
    for kw in ("IF", "IN", "BY", "DEF", "Nat", "Int", "Seq", "Len", "TRUE", "WF_", "SF_"):
        assert kw in RESERVED


def test_collisions_many_one_letter_identifiers():
    # 20 one-letter operators + bound vars: the new names must avoid every token
    letters = "ABCDEFGHIJKLMNOPQRST"
    defs = "\n".join(f"{c} == 1" for c in letters)
    text = f"---- MODULE Q ----\n{defs}\nZ == \\A u, v, w \\in {{1}} : u = v\n====\n"
    r = rename_task({"Q": text}, None, None, 0, "c")
    news = [r.mapping[c] for c in letters]
    assert len(set(news)) == len(news)
    assert not (set(news) & (set(letters) | {"Z", "Q", "u", "v", "w"}))
    assert set(r.mapping.values()).isdisjoint(set(r.mapping) | RESERVED)


# ------------------------------------------------------------------ rename_task

def test_same_length_names_and_bytes():
    r = _task()
    for old, new in r.mapping.items():
        assert len(old) == len(new) and old != new
    olds = {"Sys": SYS, "MCSys": MC, "Wrap": INST}
    for old_name, text in olds.items():
        new_text = r.modules[r.module_names[old_name]]
        assert len(new_text.encode()) == len(text.encode())
        # same layout: every line keeps its length, junctions stay in their columns
        for lo, ln in zip(text.splitlines(), new_text.splitlines()):
            assert len(lo) == len(ln)
            assert [i for i in range(len(lo)) if lo.startswith(("/\\", "\\/"), i)] == \
                [i for i in range(len(ln)) if ln.startswith(("/\\", "\\/"), i)]
        assert not parse(new_text).root_node.has_error


def test_deterministic():
    r1, r2 = _task(), _task()
    assert r1.modules == r2.modules and r1.mapping == r2.mapping and r1.cfg_text == r2.cfg_text
    assert r1.identifiers == r2.identifiers
    r3 = rename_task({"Sys": SYS, "MCSys": MC, "Wrap": INST}, None, CFG, 8, "t")
    assert r3.mapping != r1.mapping


def test_kinds_and_module_names():
    r = _task()
    kinds = {(row["module"], row["name"]): row["kind"] for row in r.identifiers}
    assert kinds[("Sys", "Sys")] == "module"
    assert kinds[("Sys", "N")] == "constant"
    assert kinds[("Sys", "x")] == "variable"
    assert kinds[("Sys", "Flip")] == "operator"
    assert kinds[("Wrap", "S")] == "instance"
    assert kinds[("Wrap", "Total")] == "recursive"
    assert kinds[("Wrap", "fact")] == "function"
    assert kinds[("Wrap", "e")] == "let" and kinds[("Wrap", "Rest")] == "let"
    assert kinds[("Wrap", "WThm")] == "operator"
    assert set(r.module_names) == {"Sys", "MCSys", "Wrap"}
    assert set(r.modules) == set(r.module_names.values())
    for row in r.identifiers:
        assert row["new_name"] == r.mapping[row["name"]]


def test_subscripts_fairness_and_keywords():
    r = _task()
    m = r.mapping
    t = r.modules[m["Sys"]]
    v, nxt, inc = m["vars"], m["Next"], m["Inc"]
    assert f"[][{nxt}]_{v}" in t
    assert f"WF_{v}({inc})" in t and f"SF_{v}({nxt})" in t
    assert f"<<{inc}>>_{v}" in t
    assert f"[{inc}]_<<{m['x']}, {m['y']}>>" in t
    for kw in ("EXTENDS Naturals, Sequences", "UNCHANGED", "BOOLEAN", "EXCEPT", "CONSTANT",
               "VARIABLES"):
        assert kw in t
    assert f"MODULE {m['Sys']} " in t


def test_record_fields_strings_and_bound_variables_kept():
    r = _task()
    m = r.mapping
    t = r.modules[m["Sys"]]
    # field named like the operator TypeOK stays, string stays, !.val stays
    assert '[val |-> 0, TypeOK |-> "TypeOK"]' in t
    assert "!.val = " in t and "!.TypeOK = \"x\"" in t and ".val + 1" in t
    assert f"[p \\in {m['Proc']} |-> FALSE]" in t
    assert f"\\A q \\in {m['Proc']} : {m['y']}[q]" in t
    assert "~@" in t


def test_instance_with_and_prefixed_ops():
    r = _task()
    m = r.mapping
    w = r.modules[m["Wrap"]]
    s = m["S"]
    assert (f"{s} == INSTANCE {m['Sys']} WITH {m['N']} <- {m['Lim']}, {m['Proc']} <- {{1, 2}}, "
            f"{m['x']} <- {m['cnt']}, {m['y']} <- {m['flags']}, {m['msgs']} <- {m['box']}") in w
    assert f"{s}!{m['Init']} /\\ {s}!{m['Flip']}(1) = {s}!{m['Flip']}(2)" in w
    assert f"[]{s}!{m['TypeOK']}" in w


def test_let_recursive_function_lambda_higher_order():
    r = _task()
    m = r.mapping
    w = r.modules[m["Wrap"]]
    tot, e, rest, fact = m["Total"], m["e"], m["Rest"], m["fact"]
    assert f"RECURSIVE {tot}(_)" in w and f"{tot}(s) == IF s = {{}}" in w
    assert f"LET {e} == CHOOSE z \\in s : TRUE" in w
    assert f"{rest} == s \\ {{{e}}}" in w and f"IN {e} + {tot}({rest})" in w
    assert f"{fact}[n \\in Nat] == IF n = 0 THEN 1 ELSE n * {fact}[n - 1]" in w
    assert f"{m['Apply']}(F(_), v) == F(v)" in w
    assert "LAMBDA k : k + 1" in w


def test_bound_variable_named_like_unrelated_operator_kept():
    other = "---- MODULE Other ----\nhelper == 1\nLater == 2\n====\n"
    main = ("---- MODULE Main ----\nEXTENDS Naturals\n"
            "Op == \\A helper \\in {1} : helper > 0\n"
            "Op2 == LET Later == 3 IN Later\n"
            "Op3 == \\E Later \\in {1} : Later = 1\n====\n")
    r = rename_task({"Main": main, "Other": other}, None, None, 0, "b")
    t = r.modules[r.mapping["Main"]]
    assert "\\A helper \\in {1} : helper > 0" in t          # bound, Other not visible
    lt = r.mapping["Later"]
    assert f"LET {lt} == 3 IN {lt}" in t                     # LET name renamed
    assert "\\E Later \\in {1} : Later = 1" in t            # bound var of another op kept
    assert leftover_identifiers(r) == []


@pytest.mark.tlc
def test_instance_parameters_that_substitute_implicitly_follow_the_module(sany):
    inner = "---- MODULE Mem ----\nVARIABLE mem, ctl\nMInit == mem = 0 /\\ ctl = 0\n====\n"
    outer = ("---- MODULE Top ----\nVARIABLE box\n"
             "Inner(mem, c) == INSTANCE Mem WITH ctl <- c\n"
             "TInit == \\E c : Inner(box, c)!MInit\n"
             "Op == LET L == INSTANCE Mem WITH ctl <- 0, mem <- box IN L!MInit\n====\n")
    r = rename_task({"Mem": inner, "Top": outer}, None, None, 0, "i")
    m = r.mapping
    t = r.modules[m["Top"]]
    # the parameter named like Mem's variable follows its new name (implicit
    # substitution); the other parameter stays a bound variable
    assert f"{m['Inner']}({m['mem']}, c) == INSTANCE {m['Mem']} WITH {m['ctl']} <- c" in t
    assert f"\\E c : {m['Inner']}({m['box']}, c)!{m['MInit']}" in t
    ok, out = sany(r.modules, m["Top"])
    assert ok, out
    assert (f"LET {m['L']} == INSTANCE {m['Mem']} WITH {m['ctl']} <- 0, {m['mem']} <- "
            f"{m['box']} IN {m['L']}!{m['MInit']}") in t
    assert leftover_identifiers(r) == []


@pytest.mark.tlc
def test_an_implicit_substitution_into_a_library_instance_is_made_explicit(sany):
    """``INSTANCE Stuttering`` substitutes the instantiating module's ``s`` for the library
    module's VARIABLE ``s``; once ``s`` is renamed the instance needs ``WITH s <- <new>``
    (TLA+-Bench task 1559: "Substitution missing for symbol s")."""
    lib = "---- MODULE Stut ----\nVARIABLES s, vars\nStep == s' = s\n====\n"
    main = ("---- MODULE Main ----\nVARIABLE x, s\nvars == <<x, s>>\nINSTANCE Stut\n"
            "I == INSTANCE Stut WITH vars <- <<x>>\nNext == Step /\\ I!Step /\\ UNCHANGED x\n====\n")
    r = rename_task({"Main": main}, None, None, 0, "s", library_modules={"Stut": lib})
    m, t = r.mapping, r.modules[r.mapping["Main"]]
    assert f"INSTANCE Stut WITH s <- {m['s']}, vars <- {m['vars']}\n" in t
    assert f"INSTANCE Stut WITH vars <- <<{m['x']}>>, s <- {m['s']}\n" in t
    ok, out = sany({**r.modules, "Stut": lib}, m["Main"])
    assert ok, out
    assert sany({"Main": main, "Stut": lib}, "Main")[0]


def test_strings_that_name_a_possible_entry_follow_the_operator():
    """TLC v1.8.0 counts each ``_POSSIBLE`` name and the spec reads the count back by name,
    as a string: that string is renamed with the operator; other strings are kept."""
    main = ('---- MODULE M ----\nEXTENDS _Possible\nVARIABLE big\nHasFour == big = 4\n'
            'Counts == LET p == _Counts IN p["HasFour"] = 8 /\\ "HasFour" # "big"\n====\n')
    cfg = "INIT Init\nNEXT Next\n_POSSIBLE HasFour\nPOSTCONDITION Counts\n"
    r = rename_task({"M": main}, None, cfg, 0, "p")
    new = r.mapping["HasFour"]
    t = r.modules[r.mapping["M"]]
    assert f'["{new}"] = 8' in t and f'"{new}" # "big"' in t and f"_POSSIBLE {new}" in r.cfg_text
    assert rename_task({"M": main}, None, "INIT Init\nNEXT Next\n", 0, "p").modules[r.mapping["M"]].count(
        '"HasFour"') == 2                                          # without _POSSIBLE, strings are kept


def test_library_module_names_kept_and_reserved():
    lib = "---- MODULE LibMod ----\nLibOp(x) == x\nLibVal == 0\n====\n"
    main = "---- MODULE Main ----\nEXTENDS LibMod\nMine == LibOp(LibVal)\n====\n"
    r = rename_task({"Main": main}, None, None, 0, "l", library_modules={"LibMod": lib})
    t = r.modules[r.mapping["Main"]]
    assert "EXTENDS LibMod" in t and "LibOp(LibVal)" in t
    assert set(r.mapping) == {"Main", "Mine"}
    assert "LibMod" not in r.modules
    assert not set(r.mapping.values()) & {"LibOp", "LibVal", "LibMod"}


def test_cfg_renamed():
    r = _task()
    m = r.mapping
    c = r.cfg_text
    assert f"SPECIFICATION {m['Spec']}" in c
    assert f"INVARIANT {m['TypeOK']} {m['Safe']}" in c
    assert f"{m['Proc']} <- {m['MCProc']}" in c
    assert f"{m['a']} = {m['a']}" in c and f"CONSTRAINT {m['Bound']}" in c
    assert len(c) == len(CFG)


def test_leftover_scan():
    r = _task()
    assert leftover_identifiers(r) == []
    # plant an original name in a renamed module
    new_sys = r.mapping["Sys"]
    text = r.modules[new_sys]
    head, _, last = text.rstrip("\n").rpartition("\n")
    planted = f"{head}\nExtra == {r.mapping['Init']} /\\ Init\n{last}\n"
    r.modules[new_sys] = planted
    left = leftover_identifiers(r)
    assert any(name == "Init" and mod == new_sys for mod, name, _ in left)
    assert not any(name == "Extra" for _, name, _ in left)


def test_comments_renamed_by_whole_words_pluscal_too():
    """Comments follow the renaming (alias.rename.comments): prose, PlusCal code and
    the cfg; a lowercase English word stays in prose, a PlusCal string stays."""
    text = ("---- MODULE C ----\n(* Foo is great, leader too; Foos is not Foo\n--algorithm a\n"
            "variables Foo = 1, leader = \"Foo\";\nbegin\n  L: skip;\nend algorithm; *)\n"
            "VARIABLE leader\n\\* Foo again\nFoo == 1\nInit == leader = 0\n====\n")
    assert not parse(text).root_node.has_error
    r = with_comments_renamed(rename_task({"C": text}, None, "INIT Init \\* Init, leader and Foo\n", 0, "c"))
    t = r.modules[r.mapping["C"]]
    foo, leader = r.mapping["Foo"], r.mapping["leader"]
    assert f"(* {foo} is great, leader too; Foos is not {foo}\n" in t
    assert f"variables {foo} = 1, {leader} = \"Foo\";" in t and f"\\* {foo} again" in t
    assert f"{foo} == 1" in t
    assert r.cfg_text == f"INIT {r.mapping['Init']} \\* {r.mapping['Init']}, leader and {foo}\n"


# ------------------------------------------------------------------ descriptions

def test_description_rule():
    mapping = {"Bakery": "Qzwtrn", "by": "xq", "TypeOK": "Octvcq", "Init": "Octv",
               "max": "uwe", "Helper": "Jxkwqa", "num": "pqr", "Mutex": "Abcde"}
    cfg_names = {"TypeOK", "num"}
    modules = {"Bakery"}
    text = ("Lamport's Bakery algorithm, as described by Dobre and Suri; TypeOK holds, "
            "Init starts, max and num are bounds, Helper helps, Bakery-Boulangerie, "
            "TypeOKs, (Mutex). Naturals")
    out = rename_description(text, mapping, cfg_names, modules)
    assert "Lamport's Bakery algorithm" in out
    assert "described by Dobre" in out
    assert "Octvcq holds" in out and "Octv starts" in out
    assert "max and pqr are" in out                     # lowercase kept unless in cfg
    assert "Jxkwqa helps" in out and "(Abcde)." in out
    assert "Bakery-Boulangerie" in out and "TypeOKs" in out
    assert rename_description(text, mapping, cfg_names, modules) == out


def test_description_cfg_name_always_renamed():
    out = rename_description("the Bakery spec and its by clause", {"Bakery": "Xxxxxx",
                             "by": "qq"}, {"Bakery", "by"}, {"Bakery"})
    assert out == "the Xxxxxx spec and its qq clause"


# ------------------------------------------------------------------ SANY

@pytest.mark.tlc
def test_sany_accepts_renamed_modules(sany):
    r = _task()
    for name in r.modules:
        ok, out = sany(r.modules, name)
        assert ok, out
    # and the original parses too (the test modules are valid TLA+)
    ok, out = sany({"Sys": SYS, "MCSys": MC, "Wrap": INST}, "Wrap")
    assert ok, out


def test_author_subset_treats_other_modules_as_library():
    helper = "---- MODULE Helper ----\nHelp(x) == x\n====\n"
    main = "---- MODULE Main ----\nEXTENDS Helper\nUse == Help(1)\n====\n"
    r = rename_task({"Main": main, "Helper": helper}, {"Main"}, None, 0, "a")
    assert set(r.mapping) == {"Main", "Use"}
    assert set(r.modules) == {r.mapping["Main"]}
    assert "EXTENDS Helper" in r.modules[r.mapping["Main"]]
    assert "Help(1)" in r.modules[r.mapping["Main"]]
