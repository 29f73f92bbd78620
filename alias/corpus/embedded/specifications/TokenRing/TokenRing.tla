----------------------------- MODULE TokenRing ------------------------------
(***************************************************************************)
(* Mutual exclusion by circulating a single token around a ring of nodes. *)
(* A node may enter its critical section only while it holds the token,   *)
(* and passes the token to its clockwise neighbour only while it is       *)
(* outside the critical section.  Ring geometry comes from the helper     *)
(* module RingUtil, instantiated with the ring order of this module.      *)
(* The module is parametric in the ring; the model lives in MCTokenRing.  *)
(***************************************************************************)
EXTENDS Naturals, Sequences

CONSTANT Order      \* the ring, as a sequence of distinct nodes

VARIABLES holder,   \* the node currently holding the token
          state     \* state[n] is "idle", "waiting" or "critical"

R == INSTANCE RingUtil WITH Ring <- Order

Node == R!Nodes

vars == <<holder, state>>

TypeOK == /\ holder \in Node
          /\ state \in [Node -> {"idle", "waiting", "critical"}]

Init == /\ holder = Order[1]
        /\ state = [n \in Node |-> "idle"]

(* A node becomes interested in the critical section.                     *)
Request(n) == /\ state[n] = "idle"
              /\ state' = [state EXCEPT ![n] = "waiting"]
              /\ UNCHANGED holder

(* The token holder enters the critical section.                          *)
Enter(n) == /\ state[n] = "waiting"
            /\ holder = n
            /\ state' = [state EXCEPT ![n] = "critical"]
            /\ UNCHANGED holder

(* A node leaves the critical section.                                    *)
Exit(n) == /\ state[n] = "critical"
           /\ state' = [state EXCEPT ![n] = "idle"]
           /\ UNCHANGED holder

(* The holder hands the token on when it is not in the critical section.  *)
Pass == /\ state[holder] # "critical"
        /\ holder' = R!Succ(holder)
        /\ UNCHANGED state

Next == Pass \/ \E n \in Node : Request(n) \/ Enter(n) \/ Exit(n)

Spec == Init /\ [][Next]_vars /\ WF_vars(Pass)

(* At most one node is critical, and a critical node holds the token.     *)
MutualExclusion == \A n \in Node : state[n] = "critical" => holder = n

(* Deliberately wrong claim used by the failing model: the token never    *)
(* travels more than one hop away from the first node of the ring.        *)
TokenStaysNear == R!Hops(Order[1], holder) < 2
=============================================================================
