------------------------------ MODULE RingUtil ------------------------------
(***************************************************************************)
(* Helper operators for a unidirectional ring of nodes.  The ring is      *)
(* given as a sequence of distinct nodes; the successor of the last node  *)
(* is the first one.  This module has no variables and no model of its    *)
(* own: it is meant to be instantiated by a system module that fixes the  *)
(* ring parameter.                                                         *)
(***************************************************************************)
EXTENDS Naturals, Sequences

CONSTANT Ring   \* a sequence of distinct nodes, in ring order

(* The set of nodes on the ring.                                          *)
Nodes == {Ring[i] : i \in 1..Len(Ring)}

(* The index of a node in the sequence; only used inside this module.     *)
LOCAL Pos(n) == CHOOSE i \in 1..Len(Ring) : Ring[i] = n

(* The next node clockwise.                                               *)
Succ(n) == Ring[(Pos(n) % Len(Ring)) + 1]

(* The number of hops needed to travel clockwise from a to b.             *)
RECURSIVE Hops(_, _)
Hops(a, b) == IF a = b THEN 0 ELSE 1 + Hops(Succ(a), b)
=============================================================================
