------------------------------- MODULE Clock -------------------------------
(***************************************************************************)
(* A twelve-hour wall clock whose minute hand jumps forward one quarter    *)
(* of an hour at a time.  After the fourth quarter the hour hand advances  *)
(* and wraps from twelve back to one.  The clock never stops: weak         *)
(* fairness on the next-state relation guarantees it keeps ticking, so     *)
(* midnight recurs forever and every noon is followed by one o'clock.      *)
(***************************************************************************)
EXTENDS Naturals

VARIABLES hr,   \* the hour hand, 1 .. 12
          qtr   \* the quarter of the hour shown by the minute hand, 0 .. 3

vars == <<hr, qtr>>

TypeOK == /\ hr \in 1..12
          /\ qtr \in 0..3

Init == /\ hr = 12
        /\ qtr = 0

(* One tick: the minute hand moves a quarter; on the full hour the hour   *)
(* hand moves too.                                                         *)
Tick == /\ qtr' = (qtr + 1) % 4
        /\ hr' = IF qtr = 3
                    THEN IF hr = 12 THEN 1 ELSE hr + 1
                    ELSE hr

Next == Tick

Spec == Init /\ [][Next]_vars /\ WF_vars(Next)

(* Liveness: the clock shows twelve o'clock sharp infinitely often, and   *)
(* whenever it shows twelve it eventually shows one.                       *)
MidnightRecurs == []<>(hr = 12 /\ qtr = 0)

NoonLeadsToOne == (hr = 12) ~> (hr = 1)
=============================================================================
