---------------------------- MODULE TrafficLight ----------------------------
(***************************************************************************)
(* A single traffic light at the end of a queue of cars.  Cars arrive at  *)
(* the red light and leave one at a time while it is green; the light     *)
(* cycles red, green, yellow, red.  The controller only turns the light   *)
(* green when cars are waiting.  Because arriving cars can keep the       *)
(* controller busy, turning green is protected by strong fairness, while  *)
(* the remaining light changes and the departures are weakly fair.        *)
(***************************************************************************)
EXTENDS Naturals

CONSTANT MaxQueue   \* the most cars that can wait at the light

VARIABLES light,    \* "red", "green" or "yellow"
          cars      \* number of cars waiting

vars == <<light, cars>>

TypeOK == /\ light \in {"red", "green", "yellow"}
          /\ cars \in 0..MaxQueue

Init == /\ light = "red"
        /\ cars = 0

Arrive == /\ cars < MaxQueue
          /\ cars' = cars + 1
          /\ UNCHANGED light

Depart == /\ light = "green"
          /\ cars > 0
          /\ cars' = cars - 1
          /\ UNCHANGED light

ToGreen == /\ light = "red"
           /\ cars > 0
           /\ light' = "green"
           /\ UNCHANGED cars

ToYellow == /\ light = "green"
            /\ light' = "yellow"
            /\ UNCHANGED cars

ToRed == /\ light = "yellow"
         /\ light' = "red"
         /\ UNCHANGED cars

Next == Arrive \/ Depart \/ ToGreen \/ ToYellow \/ ToRed

Spec == /\ Init /\ [][Next]_vars
        /\ SF_vars(ToGreen)
        /\ WF_vars(ToYellow \/ ToRed)
        /\ WF_vars(Depart)

(* No car drives while the light is not green: the queue only shrinks on  *)
(* green.                                                                  *)
OnlyGreenDeparts == [][cars' < cars => light = "green"]_vars

(* Waiting cars always eventually see a green light.                      *)
WaitingSeesGreen == (cars > 0 /\ light = "red") ~> (light = "green")

(* Unless the light eventually stays red for good, it keeps cycling: a    *)
(* switch from green to yellow happens infinitely often.                  *)
GreenEnds == <>[](light = "red") \/ []<><<ToYellow>>_vars
=============================================================================
