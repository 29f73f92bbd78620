------------------------------ MODULE Peterson ------------------------------
(***************************************************************************)
(* Peterson's two-process mutual exclusion algorithm, written in PlusCal.  *)
(* Each process announces its interest with a flag, then politely gives   *)
(* the turn to the other process and waits until either the other process *)
(* is not interested or the turn has come back to it.  Both processes are *)
(* fair, so each one that wants the critical section eventually gets it.   *)
(* The translation below the algorithm was produced by the PlusCal         *)
(* translator.  The label of the outer loop follows the naming scheme the  *)
(* translator uses for labels it adds by itself, Lbl_1.                    *)
(***************************************************************************)
EXTENDS Naturals, TLC

(* --algorithm Peterson
variables flag = [i \in {0, 1} |-> FALSE], turn = 0;

define
  Other(p) == 1 - p
end define;

fair process Proc \in {0, 1}
begin
  Lbl_1: while TRUE do
    enter: flag[self] := TRUE;
    yield: turn := Other(self);
    wait:  await flag[Other(self)] = FALSE \/ turn = self;
    cs:    skip;
    leave: flag[self] := FALSE;
  end while;
end process;
end algorithm; *)
\* BEGIN TRANSLATION - the hash of the PCal code: PCal-8e5f7bae32e1ecfd00cb0d960345f20d
VARIABLES flag, turn, pc

(* define statement *)
Other(p) == 1 - p


vars == << flag, turn, pc >>

ProcSet == ({0, 1})

Init == (* Global variables *)
        /\ flag = [i \in {0, 1} |-> FALSE]
        /\ turn = 0
        /\ pc = [self \in ProcSet |-> "Lbl_1"]

Lbl_1(self) == /\ pc[self] = "Lbl_1"
               /\ pc' = [pc EXCEPT ![self] = "enter"]
               /\ UNCHANGED << flag, turn >>

enter(self) == /\ pc[self] = "enter"
               /\ flag' = [flag EXCEPT ![self] = TRUE]
               /\ pc' = [pc EXCEPT ![self] = "yield"]
               /\ turn' = turn

yield(self) == /\ pc[self] = "yield"
               /\ turn' = Other(self)
               /\ pc' = [pc EXCEPT ![self] = "wait"]
               /\ flag' = flag

wait(self) == /\ pc[self] = "wait"
              /\ flag[Other(self)] = FALSE \/ turn = self
              /\ pc' = [pc EXCEPT ![self] = "cs"]
              /\ UNCHANGED << flag, turn >>

cs(self) == /\ pc[self] = "cs"
            /\ TRUE
            /\ pc' = [pc EXCEPT ![self] = "leave"]
            /\ UNCHANGED << flag, turn >>

leave(self) == /\ pc[self] = "leave"
               /\ flag' = [flag EXCEPT ![self] = FALSE]
               /\ pc' = [pc EXCEPT ![self] = "Lbl_1"]
               /\ turn' = turn

Proc(self) == Lbl_1(self) \/ enter(self) \/ yield(self) \/ wait(self)
                 \/ cs(self) \/ leave(self)

Next == (\E self \in {0, 1}: Proc(self))

Spec == /\ Init /\ [][Next]_vars
        /\ \A self \in {0, 1} : WF_vars(Proc(self))

\* END TRANSLATION - the hash of the generated TLA code (remove to silence divergence warnings): TLA-b7a8d5d67d9f3d2ccc5e2dc4fd164d84

(* The state of both processes is well typed.                             *)
TypeOK == /\ flag \in [{0, 1} -> BOOLEAN]
          /\ turn \in {0, 1}
          /\ pc \in [{0, 1} -> {"Lbl_1", "enter", "yield", "wait", "cs", "leave"}]

(* Never both processes in the critical section.                          *)
MutualExclusion == ~(pc[0] = "cs" /\ pc[1] = "cs")

(* A process that raised its flag eventually reaches the critical section.*)
StarvationFree == \A p \in {0, 1} : (pc[p] = "yield") ~> (pc[p] = "cs")
=============================================================================
