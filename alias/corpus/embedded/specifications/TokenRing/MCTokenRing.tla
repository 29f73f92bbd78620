---------------------------- MODULE MCTokenRing -----------------------------
(***************************************************************************)
(* Model for TokenRing: a ring of three symmetric nodes given as model    *)
(* values.  The configuration files substitute the ring constant by the   *)
(* sequence defined here.                                                  *)
(***************************************************************************)
EXTENDS TokenRing

CONSTANTS n1, n2, n3   \* model values

MCOrder == <<n1, n2, n3>>
=============================================================================
